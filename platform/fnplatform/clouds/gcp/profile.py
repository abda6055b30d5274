"""What the shared code knows of GCP by name: scope, labels, regions, provider family."""

from __future__ import annotations

from fnplatform.cloud import CloudProfile, declare
from fnplatform.clouds.gcp.regions import CCAAS_REGIONS, EU_REGIONS, REGIONS
from fnplatform.clouds.gcp.tags import GCP_LABELS

PROFILE = declare(
    CloudProfile(
        name="gcp",
        scope_key="project",
        scope_what="the GCP project id",
        tag_style=GCP_LABELS,
        regions=REGIONS,
        eu_regions=EU_REGIONS,
        ccaas_regions=CCAAS_REGIONS,
        provider="provider-upjet-gcp",
        api_group="gcp.upbound.io",
        placement_fields=(
            (
                "project",
                "the GCP project: ForceNew on every google resource (Terraform "
                "google provider, each resource's 'project' argument)",
            ),
            (
                "location",
                "GCP location: ForceNew (Terraform google provider, the resource's "
                "'location' argument)",
            ),
            (
                "region",
                "GCP region: ForceNew (Terraform google provider, the resource's 'region' "
                "argument)",
            ),
            (
                "zone",
                "GCP zone: ForceNew (Terraform google provider, the resource's 'zone' argument)",
            ),
        ),
        example_region="europe-west1",
        example_scope="acme-probe",
    )
)
