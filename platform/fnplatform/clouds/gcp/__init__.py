"""Cloud module: gcp (provider-upjet-gcp v2, cluster-scoped ``*.gcp.upbound.io`` kinds).

Importing it registers the GCP builders and answers on the capability objects of
:mod:`fnplatform.library`, one file per capability as on every cloud (``network``, ``cluster``
with node pools, ``dns``, ``identity``, ``bucket``, ``key``, ``cdn``, ``database``, ``ingress``,
``failover``), the kinds in ``kinds``, helpers in ``common``, ``settings`` (the environment's
``gcp`` block) and ``iam``. The project is the one the composer places the composite in.
"""

from fnplatform.clouds.gcp import (
    bucket,
    cdn,
    cluster,
    database,
    dns,
    failover,
    identity,
    ingress,
    key,
    network,
)

__all__ = [
    "bucket",
    "cdn",
    "cluster",
    "database",
    "dns",
    "failover",
    "identity",
    "ingress",
    "key",
    "network",
]
