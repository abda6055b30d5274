"""AWS's regions, by the names its APIs take (``eu-west-1``).

The public list, https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html
(commercial regions, GovCloud and China). A region AWS opens later is added here; until then a
claim naming it is refused on its field.
"""

from __future__ import annotations

REGIONS = frozenset(
    {
        "af-south-1",
        "ap-east-1",
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-central-1",
        "ca-west-1",
        "cn-north-1",
        "cn-northwest-1",
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "il-central-1",
        "me-central-1",
        "me-south-1",
        "mx-central-1",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-gov-east-1",
        "us-gov-west-1",
        "us-west-1",
        "us-west-2",
    }
)

#: Its regions inside the EU/EEA, where GDPR data stays. Not the UK or Switzerland (adequacy
#: decisions, but outside the EEA): a platform that accepts them lists them itself.
EU_REGIONS: tuple[str, ...] = (
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-3",
)

#: By CCaaS platform, the regions near the platform's own media regions, where a BYOC trunk's
#: latency to the platform stays low: where a contact-center endpoint may run by default.
CCAAS_REGIONS: dict[str, tuple[str, ...]] = {
    "genesys-cloud": (
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-south-1",
        "ap-southeast-2",
        "ca-central-1",
        "eu-central-1",
        "eu-west-1",
        "eu-west-2",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-west-2",
    ),
    "nice-cxone": (
        "ap-northeast-1",
        "ap-southeast-2",
        "ca-central-1",
        "eu-central-1",
        "eu-west-2",
        "us-east-1",
        "us-west-2",
    ),
}
