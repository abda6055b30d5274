"""A simulation of the providers, for rendering and tests without a cloud.

What a provider and the cloud behind it would report after applying the function's
desired resources: ids the cloud computes, status fields, connection details, the
Ready and Synced conditions. ``make render CONVERGE=1`` (tools/render_own.py), the
fixture generators under tools/ and the tests use it; the function itself never does
(it is not part of the wheel).
"""

from providersim.simulation import (
    ACCOUNT,
    CONNECTION_KEYS,
    REFUSALS,
    Refusal,
    connection_details,
    connection_secret,
    digest,
    group_of,
    helm_release,
    observed,
    observed_ready,
    ready,
    refusal,
    report,
    reported,
    wrapped_status,
)

__all__ = [
    "ACCOUNT",
    "CONNECTION_KEYS",
    "REFUSALS",
    "Refusal",
    "connection_details",
    "connection_secret",
    "digest",
    "group_of",
    "helm_release",
    "observed",
    "observed_ready",
    "ready",
    "refusal",
    "report",
    "reported",
    "wrapped_status",
]
