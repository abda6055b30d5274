"""fnplatform: the resource library and composers behind function-platform.

The folder on disk is ``platform/`` (the product's layout); the importable package is
``fnplatform`` because ``platform`` is a standard-library module that grpc, pydantic and
uuid import, and shadowing it breaks them.
"""
