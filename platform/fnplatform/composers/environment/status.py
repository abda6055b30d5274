"""The environment's status, from observed state, and the condition naming pending parts."""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.composers.environment.manifests import App, service_address
from fnplatform.composition import Composition
from fnplatform.library import values

PARTS_CONDITION = "PartsReady"


@dataclass(frozen=True)
class Parts:
    """Composition names of the parts whose readiness makes the environment ready."""

    namespace: str
    database: str
    bucket: str
    cdn: str
    deployment: str
    service: str
    user: str  # the Job creating the app's database user
    connection: str | None = None  # the copied Secret, when the app runs on another cluster
    #: The Job generating the administrator's password, where neither provider nor platform does.
    root_password: str | None = None


def report_status(comp: Composition, parts: Parts, *, app: App, bucket_name: str) -> None:
    """Status fields from observed state (remembered while briefly unobserved), ``ready``, and
    a ``PartsReady`` condition listing what is still pending."""
    if comp.is_ready(parts.namespace):
        comp.remember("namespace", app.namespace)
    else:
        comp.remember("namespace", None)
    comp.remember("databaseHost", values.database_host(comp, parts.database))
    comp.remember("frontendBucketName", bucket_name if comp.is_observed(parts.bucket) else None)
    comp.remember("cdnDomainName", values.cdn_domain(comp, parts.cdn))
    comp.remember(
        "backendService", service_address(app) if comp.is_ready(parts.service) else None
    )
    checks = {
        "namespace": [parts.namespace],
        "database": [*([parts.root_password] if parts.root_password else []), parts.database],
        "frontend bucket": [parts.bucket],
        "cdn": [parts.cdn],
        "connection secret": [parts.connection] if parts.connection else [],
        "database user": [parts.user],
        "backend": [parts.deployment, parts.service],
    }
    pending = comp.pending(checks)
    comp.set_status("ready", not pending)
    comp.set_status("pending", pending)
    if pending:
        comp.condition(
            PARTS_CONDITION, False, "Pending", f"waiting for: {', '.join(pending)}"
        )
    else:
        comp.condition(PARTS_CONDITION, True, "AllPartsReady", "every part is ready")
