"""The pass engine: one RunFunction request through the library.

The step input, the EnvironmentConfigs and required resources a pass fetches, the runner
that calls a composer and the rules after it, the memo and pass reuse, and the protobuf
conversions. Imported by ``function/`` (the server) and by tests; composers and cloud
builders never import it (they see a :class:`~fnplatform.composition.Composition`).
"""
