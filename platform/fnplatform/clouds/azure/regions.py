"""Azure's regions, by the location names its APIs take (``westeurope``).

The public list, https://learn.microsoft.com/azure/reliability/regions-list (``az account
list-locations``, physical regions). A region Azure opens later is added here; until then a
claim naming it is refused on its field.
"""

from __future__ import annotations

REGIONS = frozenset(
    {
        "australiacentral",
        "australiacentral2",
        "australiaeast",
        "australiasoutheast",
        "austriaeast",
        "belgiumcentral",
        "brazilsouth",
        "brazilsoutheast",
        "canadacentral",
        "canadaeast",
        "centralindia",
        "southindia",
        "westindia",
        "jioindiacentral",
        "jioindiawest",
        "centralus",
        "eastus",
        "eastus2",
        "northcentralus",
        "southcentralus",
        "westcentralus",
        "westus",
        "westus2",
        "westus3",
        "chilecentral",
        "eastasia",
        "southeastasia",
        "francecentral",
        "francesouth",
        "germanynorth",
        "germanywestcentral",
        "indonesiacentral",
        "israelcentral",
        "italynorth",
        "japaneast",
        "japanwest",
        "koreacentral",
        "koreasouth",
        "malaysiawest",
        "mexicocentral",
        "newzealandnorth",
        "northeurope",
        "westeurope",
        "norwayeast",
        "norwaywest",
        "polandcentral",
        "qatarcentral",
        "southafricanorth",
        "southafricawest",
        "spaincentral",
        "swedencentral",
        "swedensouth",
        "switzerlandnorth",
        "switzerlandwest",
        "uaecentral",
        "uaenorth",
        "uksouth",
        "ukwest",
    }
)

#: Its regions inside the EU/EEA, where GDPR data stays. Not the UK or Switzerland (adequacy
#: decisions, but outside the EEA): a platform that accepts them lists them itself.
EU_REGIONS: tuple[str, ...] = (
    "francecentral",
    "germanywestcentral",
    "italynorth",
    "northeurope",
    "norwayeast",
    "polandcentral",
    "spaincentral",
    "swedencentral",
    "westeurope",
)

#: By CCaaS platform, the regions near the platform's own media regions, where a BYOC trunk's
#: latency to the platform stays low: where a contact-center endpoint may run by default.
CCAAS_REGIONS: dict[str, tuple[str, ...]] = {
    "genesys-cloud": (
        "australiaeast",
        "canadacentral",
        "eastus",
        "eastus2",
        "germanywestcentral",
        "japaneast",
        "northeurope",
        "uksouth",
        "westeurope",
        "westus2",
    ),
    "nice-cxone": (
        "australiaeast",
        "canadacentral",
        "eastus",
        "uksouth",
        "westeurope",
        "westus2",
    ),
}
