"""Cloud module: gcp. Importing it registers the GCP builders of every capability it provides.

Resources are those of the upjet GCP provider v3 (``*.gcp.upbound.io``, cluster-scoped), at
each kind's storage version. The GCP project is the composite's ``planeId`` label.
"""

from fnplatform.clouds.gcp import (
    bucket,
    cdn,
    cluster,
    database,
    failover,
    identity,
    ingress,
    key,
    network,
    values,
)

__all__ = [
    "bucket",
    "cdn",
    "cluster",
    "database",
    "failover",
    "identity",
    "ingress",
    "key",
    "network",
    "values",
]
