"""A descriptor pool of our own for the generated ``a2a.proto`` code (hand-written).

The official SDK (``a2a-sdk``) registers its own build of ``a2a.proto`` in protobuf's default
pool (package ``lf.a2a.v1``; its 0.3 releases ``a2a.v1``); a second registration of the same
names there fails with "duplicate file name" or "duplicate symbol". So :mod:`.a2a_pb2` and the
0.3 ``_grpc_v03.a2a_v03_pb2`` are built in a private pool, beside copies of the files they
import, and both libraries work in one process. The wire format is the same: protobuf messages
carry field numbers, not package names.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor

POOL = descriptor_pool.DescriptorPool()
#: the imported files already in :data:`POOL` (1.0's and 0.3's protos import the same ones)
_ADDED: set[str] = set()


def _add_dependency(name: str, done: set[str]) -> None:
    if name in done or name in _ADDED:
        return
    done.add(name)
    source = descriptor_pool.Default().FindFileByName(name)  # imported by the generated code
    for dependency in source.dependencies:
        _add_dependency(dependency.name, done)
    POOL.AddSerializedFile(source.serialized_pb)
    _ADDED.add(name)


def add_file(serialized: bytes) -> FileDescriptor:
    """Add a serialized ``FileDescriptorProto`` and the files it imports to :data:`POOL`."""
    proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    done: set[str] = set()
    for dependency in proto.dependency:
        _add_dependency(dependency, done)
    return POOL.AddSerializedFile(serialized)
