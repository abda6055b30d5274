"""The pass engine: one RunFunction request through the library.

The runner that merges the EnvironmentConfigs, calls a composer and the rules after it
and writes the response, and pass reuse. Imported by ``function/`` (the server) and the
tests; composers, cloud builders, the library and the rules never import it (they see a
:class:`~fnplatform.composition.Composition`).
"""
