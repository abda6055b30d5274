"""The c5c3 ``ControlPlane`` of a tenant, as the real CRD (C5C3/cobaltcore) defines it.

Every field the operator's defaulting webhook would fill is written explicitly, so the object
validates offline against the CRD (its defaults are the operator's own, from cobaltcore
``deploy/kind/controlplane/controlplane.yaml``, unless the region's settings say otherwise).
The API has keystone, glance, placement, horizon and barbican only; the design's other
services (nova, neutron, cinder, octavia, manila), Cortex and the TLS issuer have no field, so
they are reported in a condition instead of invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fnplatform.composers.openstack.model import ControlPlaneSettings, OpenStackClusterSpec
from fnplatform.composers.openstack.presets import PRESETS
from fnplatform.errors import InputError

CONTROL_PLANE_API = "c5c3.io/v1alpha1"
NOT_IN_API = ("nova", "neutron", "cinder", "octavia", "manila")


@dataclass(frozen=True)
class ControlPlaneParts:
    """The ControlPlane manifest and what the claim asked for that it cannot carry."""

    manifest: dict[str, Any]
    missing: list[str] = field(default_factory=list)


def public_endpoints(tenant: str, settings: ControlPlaneSettings) -> dict[str, str]:
    """Public URLs of keystone and horizon when the region has a domain (else the operator
    derives them from its gateway and nothing is known here)."""
    if not settings.domain:
        return {}
    return {
        "keystone": f"https://keystone-{tenant}.{settings.domain}/v3",
        "horizon": f"https://horizon-{tenant}.{settings.domain}/",
    }


def issuer(spec: OpenStackClusterSpec, settings: ControlPlaneSettings) -> str:
    """The cert-manager ClusterIssuer of a TLS-enabled cluster: its own, else the region's.

    Neither is an error on ``spec.tls.issuerRef``: the XRD cannot check it at admission, as
    it cannot see the region's EnvironmentConfig.
    """
    chosen = spec.tls.issuerRef or settings.tlsIssuerRef
    if not chosen:
        raise InputError(
            "spec.tls.issuerRef",
            "required when tls.enabled is true and the region's EnvironmentConfig sets no "
            "controlPlane.tlsIssuerRef; name a cert-manager ClusterIssuer, or set tls.enabled "
            "to false",
        )
    return chosen


def control_plane(
    tenant: str,
    namespace: str,
    spec: OpenStackClusterSpec,
    settings: ControlPlaneSettings,
) -> ControlPlaneParts:
    """The ControlPlane for ``tenant`` in ``namespace``."""
    preset = PRESETS[spec.size]
    endpoints = public_endpoints(tenant, settings)
    services: dict[str, Any] = {"keystone": {"replicas": preset.keystone}}
    if "keystone" in endpoints:
        services["keystone"]["publicEndpoint"] = endpoints["keystone"]
    missing: list[str] = []
    enabled = spec.services
    if enabled.glance:
        if settings.glanceBackends:
            services["glance"] = {
                "replicas": preset.glance,
                "backends": [dict(b) for b in settings.glanceBackends],
            }
        else:
            missing.append(
                "glance (no controlPlane.glanceBackends in the region's settings; "
                "the API has S3 backends only)"
            )
    if enabled.nova:
        services["placement"] = {"replicas": preset.placement}
    if enabled.horizon:
        services["horizon"] = {"replicas": preset.horizon}
        if "horizon" in endpoints:
            services["horizon"]["publicEndpoint"] = endpoints["horizon"]
    for name in NOT_IN_API:
        if getattr(enabled, name):
            detail = f" (nova-api replicas {preset.nova_api})" if name == "nova" else ""
            missing.append(f"{name}{detail}")
    if spec.cortex.enabled:
        missing.append(f"cortex (pipelines {', '.join(spec.cortex.pipelines)})")
    if spec.tls.enabled:
        missing.append(f"tls (issuerRef {issuer(spec, settings)})")
    manifest = {
        "apiVersion": CONTROL_PLANE_API,
        "kind": "ControlPlane",
        "metadata": {"name": tenant, "namespace": namespace},
        "spec": {
            "openStackRelease": settings.openStackRelease,
            "region": spec.region,
            "korc": {
                "adminCredential": {
                    "applicationCredential": {
                        "restricted": True,
                        "rotation": {"mode": "PasswordDriven"},
                    },
                    "cloudCredentialsRef": {
                        "cloudName": "admin",
                        "secretName": "k-orc-clouds-yaml",
                    },
                    "domainName": "Default",
                    "passwordSecretRef": {"name": "keystone-admin", "key": "password"},
                    "projectName": "admin",
                    "userName": "admin",
                }
            },
            "infrastructure": {
                "database": {
                    "clusterRef": {"name": settings.databaseClusterRef},
                    "database": "keystone",
                    "secretRef": {"name": "keystone-db", "key": "password"},
                    "replicas": preset.mariadb,
                    "storageSize": settings.databaseStorageSize,
                },
                "cache": {
                    "backend": settings.cacheBackend,
                    "clusterRef": {"name": settings.cacheClusterRef},
                    "replicas": preset.memcached,
                },
            },
            "services": services,
        },
    }
    return ControlPlaneParts(manifest, missing)
