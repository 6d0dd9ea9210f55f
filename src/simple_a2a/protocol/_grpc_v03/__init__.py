"""Generated protobuf and gRPC code for A2A 0.3's ``a2a.proto`` (package ``a2a.v1``, service
``a2a.v1.A2AService``; ``scripts/gen_grpc``), in the private descriptor pool of
:mod:`simple_a2a.protocol._grpc._pool`. Needs the ``grpc`` extra; nothing imports this package
unless gRPC is used."""
