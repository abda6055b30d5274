"""What the shared code knows of AWS by name: scope, tags, regions, provider family."""

from __future__ import annotations

from fnplatform.cloud import CloudProfile, declare
from fnplatform.clouds.aws.regions import CCAAS_REGIONS, EU_REGIONS, REGIONS
from fnplatform.clouds.aws.tags import AWS_TAGS

PROFILE = declare(
    CloudProfile(
        name="aws",
        scope_key="accountId",
        scope_what="the AWS account id",
        tag_style=AWS_TAGS,
        regions=REGIONS,
        eu_regions=EU_REGIONS,
        ccaas_regions=CCAAS_REGIONS,
        provider="provider-upjet-aws",
        api_group="aws.upbound.io",
        placement_fields=(
            (
                "region",
                "the AWS Region the resource is managed in: upjet AWS looks the "
                "resource up by its external name in that Region (Terraform AWS "
                "provider v6, 'Enhanced Region Support': "
                "https://hashicorp.github.io/terraform-provider-aws/"
                "enhanced-region-support), so another Region means a new resource",
            ),
        ),
        example_region="eu-west-1",
        example_scope="123456789012",
    )
)
