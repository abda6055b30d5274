"""The environment's status, from observed state, and the condition naming pending parts."""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.api.phase import Phase
from fnplatform.composers.environment.manifests import App, service_address
from fnplatform.composition import Composition
from fnplatform.library.cdn import CdnSpec, cdn_custom_domains, cdn_domain
from fnplatform.library.database import database_host
from fnplatform.rules.controls import FAILING, Control, assess, vouch

PARTS_CONDITION = "PartsReady"
CUSTOM_DOMAINS_CONDITION = "CustomDomainsReady"


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


def report_status(
    comp: Composition, parts: Parts, *, app: App, bucket_name: str, cdn: CdnSpec
) -> None:
    """Status fields from observed state (remembered while briefly unobserved), ``ready``, and
    a ``PartsReady`` condition listing what is still pending.

    A part is ready while each of its resources is Synced and Ready
    (:func:`fnplatform.rules.controls.assess`): one the provider cannot apply (``Synced=False``)
    makes ``PartsReady`` False, ``ControlFailing``, naming the part and the resource.
    """
    _report_custom_domains(comp, parts.cdn, cdn)
    if comp.is_ready(parts.namespace):
        comp.remember("namespace", app.namespace)
    else:
        comp.remember("namespace", None)
    comp.remember("databaseHost", database_host(comp, parts.database))
    comp.remember("frontendBucketName", bucket_name if comp.is_observed(parts.bucket) else None)
    comp.remember("cdnDomainName", cdn_domain(comp, parts.cdn, cdn))
    comp.remember("backendService", service_address(app) if comp.is_ready(parts.service) else None)
    verdict = assess(
        comp,
        [
            Control("namespace", (parts.namespace,)),
            # each part with the resources its builder composes for it (<name>-*: a database's
            # subnet group and parameters, a bucket's encryption and public access block, a
            # CDN's certificate and origins)
            Control(
                "database",
                (
                    *([parts.root_password] if parts.root_password else []),
                    parts.database,
                    f"{parts.database}-*",
                ),
            ),
            Control("frontend bucket", (parts.bucket, f"{parts.bucket}-*")),
            Control("cdn", (parts.cdn, f"{parts.cdn}-*")),
            *([Control("connection secret", (parts.connection,))] if parts.connection else []),
            Control("database user", (parts.user, f"{parts.user}-*")),
            Control("backend", (parts.deployment, parts.service)),
        ],
    )
    pending = list(verdict.unmet)
    comp.set_status("ready", verdict.ok)
    comp.set_status("pending", pending)
    if verdict.ok:
        comp.condition(PARTS_CONDITION, True, "AllPartsReady", "every part is ready")
    else:
        comp.condition(
            PARTS_CONDITION,
            False,
            FAILING if verdict.failing else Phase.PENDING.value,
            f"waiting for: {', '.join(pending)}. {verdict.summary()}",
        )


def _report_custom_domains(comp: Composition, cdn: str, spec: CdnSpec) -> None:
    """``status.customDomains`` and the ``CustomDomainsReady`` condition: which hosts the CDN
    serves yet, and which DNS records the platform must still create itself (a cloud without
    a configured DNS zone can't), so a domain never waits silently."""
    if not spec.custom_domains:
        return
    domains = cdn_custom_domains(comp, cdn, spec)
    comp.set_status(
        "customDomains",
        [
            {
                "host": d.host,
                "ready": d.ready,
                **(
                    {
                        "dnsRecords": [
                            {"name": r.name, "type": r.type, "value": r.value} for r in d.records
                        ]
                    }
                    if d.records
                    else {}
                ),
            }
            for d in domains
        ],
    )
    records = [f"{r.type} {r.name} {r.value}" for d in domains for r in d.records]
    waiting = [d.host for d in domains if not d.ready]
    if not waiting:
        # Served as observed, and vouched for only while the CDN's resources (the
        # distribution, its certificate and settings) are Synced and Ready.
        hosts = ", ".join(d.host for d in domains)
        vouch(
            comp,
            CUSTOM_DOMAINS_CONDITION,
            [Control(f"custom domains served: {hosts}", (cdn, f"{cdn}-*"))],
            reason="Served",
            message="the CDN serves every custom domain with an issued certificate",
        )
        return
    message = f"not served yet: {', '.join(waiting)}"
    if records:
        message += f"; the platform must create these DNS records: {'; '.join(records)}"
    comp.condition(
        CUSTOM_DOMAINS_CONDITION,
        False,
        "DnsRecordsNeeded" if records else Phase.PENDING.value,
        message,
    )
