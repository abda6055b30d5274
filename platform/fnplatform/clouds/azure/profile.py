"""What the shared code knows of Azure by name: scope, tags, regions, provider family."""

from __future__ import annotations

from fnplatform.cloud import CloudProfile, declare
from fnplatform.clouds.azure.regions import CCAAS_REGIONS, EU_REGIONS, REGIONS
from fnplatform.clouds.azure.tags import AZURE_TAGS

PROFILE = declare(
    CloudProfile(
        name="azure",
        scope_key="resourceGroup",
        scope_what="the Azure resource group",
        tag_style=AZURE_TAGS,
        regions=REGIONS,
        eu_regions=EU_REGIONS,
        ccaas_regions=CCAAS_REGIONS,
        provider="provider-upjet-azure",
        api_group="azure.upbound.io",
        placement_fields=(
            (
                "location",
                "Azure region: 'Changing this forces a new resource' (azurerm, "
                "every resource's 'location')",
            ),
            (
                "resourceGroupName",
                "Azure resource group: 'Changing this forces a new "
                "resource' (azurerm, every resource's "
                "'resource_group_name')",
            ),
        ),
        example_region="westeurope",
        example_scope="rg-probe",
        # Key Vaults (storage keys) need the tenant and an administrator the vault trusts.
        example_settings={
            "tenantId": "00000000-0000-0000-0000-00000000aaaa",
            "keyVaultAdminObjectId": "00000000-0000-0000-0000-00000000bbbb",
        },
    )
)
