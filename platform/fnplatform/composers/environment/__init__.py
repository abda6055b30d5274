"""The ``environment`` module (composer lands with the library it builds on)."""
