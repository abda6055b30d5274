"""The API server refuses each bad claim of tests/support/admission.py at admission, with the
message of the XRD's CEL rule (issue 32 item 4): a dry-run create of the claim (v1 form) or of
the namespaced XR with the same spec (v2 form), on the live control plane with the platform's
XRDs of one form installed (the ``platform`` fixture). Nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.dynamic.exceptions import DynamicApiError

from tests.live.layers import Live
from tests.support.admission import BAD_CLAIMS, BadClaim
from tools.generate_apis import module_apis

pytestmark = pytest.mark.live

#: What only a v1 claim's spec has (a v2 namespaced XR has them under spec.crossplane).
CLAIM_ONLY = ("compositionRef", "compositionSelector", "writeConnectionSecretToRef")


def _as_form(claim: dict[str, Any], module: str, form: str) -> dict[str, Any]:
    """The claim as the installed form takes it: the claim, or the namespaced XR."""
    if form == "v1-claims":
        return claim
    api = module_apis()[module]
    spec = {k: v for k, v in claim["spec"].items() if k not in CLAIM_ONLY}
    return {
        "apiVersion": claim["apiVersion"],
        "kind": api.kind,
        "metadata": claim["metadata"],
        "spec": spec,
    }


@pytest.mark.parametrize("bad", BAD_CLAIMS, ids=lambda b: b.id)
def test_the_api_server_refuses_the_bad_claim_with_its_message(
    platform: Live, bad: BadClaim
) -> None:
    doc = _as_form(bad.claim(), bad.module, platform.form)
    namespace = doc["metadata"]["namespace"]
    platform.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    resource = platform.kube.resource(doc["apiVersion"], doc["kind"])
    with pytest.raises(DynamicApiError) as refused:
        resource.create(body=doc, namespace=namespace, dry_run="All")
    body = refused.value.body if isinstance(refused.value.body, str) else str(refused.value.body)
    assert refused.value.status == 422, body
    assert bad.words in body, body
    # The message is on the field it names (the rule's fieldPath), not only on spec.
    assert bad.field.split(".")[-1] in body, body
