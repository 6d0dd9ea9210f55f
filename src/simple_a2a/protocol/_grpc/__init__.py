"""Generated protobuf and gRPC code for ``a2a.proto`` (``scripts/gen_grpc``); needs the ``grpc``
extra (``pip install 'simple-a2a[grpc]'``). Nothing imports this package unless gRPC is used."""
