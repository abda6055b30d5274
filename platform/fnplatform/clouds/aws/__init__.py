"""Cloud module: aws. Importing it registers the AWS builders of every capability.

One file per concern: ``kinds`` (the kinds emitted), ``common`` (ARNs, IAM documents, names),
``settings`` (the environment's ``aws`` block), ``network``, ``iam``, ``eks`` (cluster, addons,
node groups), ``dns``, ``identity`` (Pod Identity roles), ``tags``, ``values``, ``queue``.
"""

from fnplatform.clouds.aws import (
    bucket,
    cdn,
    database,
    dns,
    eks,
    failover,
    identity,
    ingress,
    key,
    network,
    queue,
    values,
)

__all__ = [
    "bucket",
    "cdn",
    "database",
    "dns",
    "eks",
    "failover",
    "identity",
    "ingress",
    "key",
    "network",
    "queue",
    "values",
]
