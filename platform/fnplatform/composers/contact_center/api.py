"""The contact-center API (the seed's names): claim ``ContactCenterEndpointClaim``, XR
``contact-center.infra/v1alpha1 ContactCenterEndpoint``, XRD
``contactcenterendpoints.contact-center.infra``.

``tools/generate_apis.py`` writes ``apis/contact-center/definition.yaml`` from :data:`API`.
"""

from __future__ import annotations

from fnplatform.api.xrd import (
    AGE_COLUMN,
    READY_COLUMN,
    ApiDefinition,
    CompositionAlias,
    PrinterColumn,
    condition_status,
)
from fnplatform.composers.contact_center.model import ContactCenterSpec, ContactCenterStatus

API = ApiDefinition(
    group="contact-center.infra",
    kind="ContactCenterEndpoint",
    claim_kind="ContactCenterEndpointClaim",
    spec_model=ContactCenterSpec,
    status_model=ContactCenterStatus,
    short_names=("cce",),
    claim_short_names=("ccec",),
    # The document's claim names it in compositionRef. The name says aws and us-east-1, but a
    # Composition cannot set spec.cloud or spec.region: the claim's own fields decide.
    aliases=(
        CompositionAlias(
            "contactcenter-endpoint-aws-us-east-1",
            "Implementing Crossplane Compositions for Multi-Cloud Contact Center Infrastructure "
            "Management, 3. Constructing the Composition Logic and 4. Claim Creation",
        ),
    ),
    printer_columns=(
        PrinterColumn("Cloud", ".spec.cloud"),
        PrinterColumn("Region", ".spec.region"),
        PrinterColumn("Platform", ".spec.platform"),
        PrinterColumn("Compliant", condition_status("Compliant")),
        READY_COLUMN,
        PrinterColumn("Bucket", ".status.recordingBucket.name", priority=1),
        AGE_COLUMN,
    ),
)
