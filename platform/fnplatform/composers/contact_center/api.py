"""The contact-center API (the seed's names): claim ``ContactCenterEndpointClaim``, XR
``contact-center.infra/v1alpha1 ContactCenterEndpoint``, XRD
``contactcenterendpoints.contact-center.infra``.

``tools/generate_apis.py`` writes ``apis/contact-center/definition.yaml`` from :data:`API`.
"""

from __future__ import annotations

from fnplatform.api.xrd import ApiDefinition, CompositionAlias
from fnplatform.composers.contact_center.model import ContactCenterSpec, ContactCenterStatus

READY_CONDITION = ".status.conditions[?(@.type=='Ready')].status"
COMPLIANT_CONDITION = ".status.conditions[?(@.type=='Compliant')].status"

API = ApiDefinition(
    group="contact-center.infra",
    version="v1alpha1",
    kind="ContactCenterEndpoint",
    plural="contactcenterendpoints",
    claim_kind="ContactCenterEndpointClaim",
    claim_plural="contactcenterendpointclaims",
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
        {"name": "Cloud", "type": "string", "jsonPath": ".spec.cloud"},
        {"name": "Region", "type": "string", "jsonPath": ".spec.region"},
        {"name": "Platform", "type": "string", "jsonPath": ".spec.platform"},
        {"name": "Compliant", "type": "string", "jsonPath": COMPLIANT_CONDITION},
        {"name": "Ready", "type": "string", "jsonPath": READY_CONDITION},
        {
            "name": "Bucket",
            "type": "string",
            "jsonPath": ".status.recordingBucket.name",
            "priority": 1,
        },
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ),
)
