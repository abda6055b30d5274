"""Layer 2: the cloud modules. Importing this package registers every cloud, once.

Each cloud module registers on the capability objects of :mod:`fnplatform.library`:
``@add_bucket.on("aws")`` a builder ``(comp, name, spec) -> None`` that emits its main
resource as ``name`` (plus helpers named ``f"{name}-<part>"``) through ``comp.emit``;
``@values.bucket_address.on("aws")`` an answer to a value; ``values.bucket_replication.on("aws")``
a flag; ``@add_cluster.extra("aws")`` an extra run after the builder. The library never imports
this package: :func:`fnplatform.composers.composers` does, as the function starts.
"""

from fnplatform.clouds import aws, azure, gcp

__all__ = ["aws", "azure", "gcp"]
