"""function-platform: the gRPC entry point and module dispatch."""
