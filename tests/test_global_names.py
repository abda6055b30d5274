"""Cloud-global names and re-creation (issue 23 item 1).

S3 and GCS bucket names, GCP KMS key rings (never deleted, names never reused), Azure storage
accounts and Key Vaults (a soft-deleted vault reserves its name) are global and can outlive
their composite. A claim's composite name carries Crossplane's random suffix; a namespaced
(v2) composite has the user's own name, so its global names also carry 8 hex digits of its
uid (:attr:`Composition.global_name_base`), and a resource that exists keeps its observed name.

The table runs the real function (the contact-center endpoint, which composes every one of
these on every cloud) in both forms, as tests/test_contact_center.py does.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from typing import Any

import providersim
import pytest
from fnplatform.api.step_input import Input
from fnplatform.composition import Composition
from fnplatform.importing import EXTERNAL_NAME

from tests.support.cases import (
    contact_center_case,
    contact_center_composite,
    converge,
    namespaced_twin,
)
from tests.support.harness import FunctionClient, Rendered, request, step_input
from tests.support.namespaced import namespaced_composite

CLOUDS = ("aws", "gcp", "azure")
NAME, NAMESPACE = "us-east-agent-cluster", "default"  # the namespaced twin's name and namespace
UID_A = "3f6c1a2e-9b4d-4c1e-8f00-1234567890ab"
UID_B = "0d9e8f7a-1111-4222-8333-444455556666"
#: Global names per cloud: kind -> where the cloud name is (metadata.name or the annotation).
GLOBAL_KINDS = {
    "aws": {"Bucket": "metadata"},
    "gcp": {"Bucket": "metadata", "KeyRing": "metadata"},
    "azure": {"Account": "annotation", "Vault": "annotation"},
}
#: At least these are named globally (composition names).
EXPECTED = {
    "aws": {"recordings", "recordings-logs", "recordings-replica"},
    "gcp": {"recordings", "recordings-logs", "recordings-key-ring"},
    "azure": {"recordings", "recordings-key-vault"},
}


def global_names(rendered: Rendered, cloud: str) -> dict[str, str]:
    """Composition name -> cloud-global name of every desired resource named globally."""
    names: dict[str, str] = {}
    for name, body in rendered.resources.items():
        where = GLOBAL_KINDS[cloud].get(str(body["kind"]))
        if where is None or "upbound.io" not in str(body["apiVersion"]):
            continue
        metadata = body["metadata"]
        names[name] = (
            str(metadata["name"])
            if where == "metadata"
            else str(metadata["annotations"][EXTERNAL_NAME])
        )
    return names


def _composite(
    cloud: str, *, namespaced: bool, name: str | None = None, uid: str | None = None
) -> dict[str, Any]:
    composite = contact_center_composite(cloud, failover=True)
    if namespaced:
        composite = namespaced_composite(composite)
    if name is not None:
        composite["metadata"]["name"] = name
    if uid is not None:
        composite["metadata"]["uid"] = uid
    return composite


@functools.cache
def _converged(
    client: FunctionClient, cloud: str, namespaced: bool, name: str | None, uid: str | None
) -> tuple[Rendered, dict[str, Any]]:
    case = contact_center_case(cloud)
    if namespaced:
        case = namespaced_twin(case)
    case = case.with_composite(_composite(cloud, namespaced=namespaced, name=name, uid=uid))
    rendered, observed = converge(client.run, case, passes=10)
    assert not rendered.fatal, rendered.fatal
    return rendered, observed


def converged(
    client: FunctionClient,
    cloud: str,
    *,
    namespaced: bool,
    name: str | None = None,
    uid: str | None = None,
) -> Rendered:
    return _converged(client, cloud, namespaced, name, uid)[0]


# -- the table: every cloud, the namespaced form ------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_namespaced_global_names_carry_the_uid(client: FunctionClient, cloud: str) -> None:
    """(a) ``<name>-<8 hex of the uid>`` is the base: the names a claim's composite of that
    name gets (Azure's compact names hash it when it doesn't fit, so compare whole names)."""
    names = global_names(converged(client, cloud, namespaced=True, uid=UID_A), cloud)
    assert EXPECTED[cloud] <= set(names), sorted(names)
    suffixed = f"{NAME}-{UID_A.replace('-', '')[:8]}"
    claim_form = global_names(converged(client, cloud, namespaced=False, name=suffixed), cloud)
    assert names == claim_form
    if cloud != "azure":  # S3 and GCS bucket names and ring names fit: the suffix is readable
        assert all(value.startswith(f"{suffixed}-") for value in names.values()), names


@pytest.mark.parametrize("cloud", CLOUDS)
def test_same_name_different_uid_gets_different_global_names(
    client: FunctionClient,
    cloud: str,
) -> None:
    """(b) A composite re-created with the same namespace and name (a new uid) never meets
    what its predecessor kept: not one global name is shared."""
    first = global_names(converged(client, cloud, namespaced=True, uid=UID_A), cloud)
    second = global_names(converged(client, cloud, namespaced=True, uid=UID_B), cloud)
    assert set(first) == set(second)
    assert set(first.values()).isdisjoint(second.values()), (first, second)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_existing_resources_keep_their_observed_names(client: FunctionClient, cloud: str) -> None:
    """(c) A namespaced composite created before its names carried the uid: its resources,
    observed under the old names (``<name>-...``, the external-name annotation), keep them,
    and what refers to them (policies, ARNs, the key id) follows."""
    rendered, observed = _converged(client, cloud, True, None, UID_A)
    old = global_names(converged(client, cloud, namespaced=False, name=NAME), cloud)
    assert set(old) == set(global_names(rendered, cloud))
    kinds = GLOBAL_KINDS[cloud]
    before = copy.deepcopy(observed)
    for name, value in old.items():
        metadata = before[name]["metadata"]
        metadata.setdefault("annotations", {})[EXTERNAL_NAME] = value
        if kinds[str(before[name]["kind"])] == "metadata":
            metadata["name"] = value
        # the provider reports ids of the resource under its old name (Azure ids carry it)
        before[name] = providersim.ready(before[name])
    case = namespaced_twin(contact_center_case(cloud))
    composite = _composite(cloud, namespaced=True, uid=UID_A)
    again = client.run(case.request(composite=composite, observed=before))
    assert not again.fatal, again.fatal
    assert global_names(again, cloud) == old
    text = str(again.resources)
    new = global_names(rendered, cloud)
    assert not any(value in text for value in new.values() if value not in old.values())
    if cloud == "aws":
        assert f"arn:aws:s3:::{old['recordings']}/*" in text  # the bucket policy, replication
    if cloud == "gcp":
        key_name = again.resource("recordings")["spec"]["forProvider"]["encryption"]
        assert f"/keyRings/{old['recordings-key-ring']}/" in key_name["defaultKmsKeyName"]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_cluster_scoped_names_are_unchanged(client: FunctionClient, cloud: str) -> None:
    """(d) A claim's composite keeps deriving from its own (suffixed) name; its uid plays no
    part, so nothing composed before changes."""
    without = global_names(converged(client, cloud, namespaced=False), cloud)
    with_uid = global_names(converged(client, cloud, namespaced=False, uid=UID_A), cloud)
    assert without == with_uid
    assert EXPECTED[cloud] <= set(without)
    if cloud != "azure":
        assert all(v.startswith("us-east-agent-cluster-x7k2p-") for v in without.values())


# -- the Composition helpers ----------------------------------------------------------------

V1 = {
    "apiVersion": "x.io/v1",
    "kind": "XThing",
    "metadata": {
        "name": "demo-x7k2p",
        "uid": UID_A,
        "labels": {"crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "team-a"},
    },
    "spec": {},
}
V2 = {
    "apiVersion": "x.io/v1",
    "kind": "XThing",
    "metadata": {"name": "demo", "namespace": "team-a", "uid": UID_A},
    "spec": {},
}


def composition(
    composite: dict[str, Any],
    *,
    observed: dict[str, Any] | None = None,
    imported: dict[str, str] | None = None,
) -> Composition:
    comp = Composition(
        request(composite, step_input("cluster"), observed=observed),
        Input.model_validate(step_input("cluster")),
        {},
    )
    if imported:
        comp.import_from(
            {
                "enabled": True,
                "resources": {name: {"externalName": value} for name, value in imported.items()},
            },
            "spec.parameters.import",
        )
    return comp


def _without_uid(composite: dict[str, Any]) -> dict[str, Any]:
    bare = copy.deepcopy(composite)
    del bare["metadata"]["uid"]
    return bare


def test_uid_suffix_is_8_hex_of_the_uid_else_of_namespace_and_name() -> None:
    assert composition(V2).uid_suffix == "3f6c1a2e"
    assert composition(V1).uid_suffix == "3f6c1a2e"
    fallback = hashlib.sha256(b"team-a/demo").hexdigest()[:8]
    assert composition(_without_uid(V2)).uid_suffix == fallback
    other = _without_uid(V2)
    other["metadata"]["namespace"] = "team-b"
    assert composition(other).uid_suffix != fallback  # same name, another namespace


def test_uid_hex_takes_the_caller_s_fallback() -> None:
    """The environment's names were always seeded with the name alone: it keeps that."""
    assert composition(V2).uid_hex("anything") == "3f6c1a2e"
    assert composition(_without_uid(V2)).uid_hex("demo") == hashlib.sha256(b"demo").hexdigest()[:8]


def test_global_name_base_by_form() -> None:
    assert composition(V1).global_name_base == "demo-x7k2p"  # the claim's composite: as is
    assert composition(_without_uid(V1)).global_name_base == "demo-x7k2p"
    assert composition(V2).global_name_base == "demo-3f6c1a2e"
    bare = composition(_without_uid(V2))
    assert bare.global_name_base == f"demo-{hashlib.sha256(b'team-a/demo').hexdigest()[:8]}"


def _observed(name: str, annotation: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if annotation is not None:
        metadata["annotations"] = {EXTERNAL_NAME: annotation}
    return {
        "apiVersion": "s3.aws.upbound.io/v1beta1",
        "kind": "Bucket",
        "metadata": metadata,
        "spec": {"forProvider": {}},
    }


def test_observed_external_name_annotation_then_name() -> None:
    comp = composition(V2, observed={"a": _observed("mr-a", "cloud-a"), "b": _observed("mr-b")})
    assert comp.observed_external_name("a") == "cloud-a"
    assert comp.observed_external_name("b") == "mr-b"
    assert comp.observed_external_name("missing") is None


def test_kept_metadata_name_of_an_imported_resource_is_its_metadata_name() -> None:
    """An import's annotation names the adopted bucket; the resource keeps its own name."""
    observed = {"a": _observed("demo-a", "adopted-bucket"), "b": _observed("demo-b", "demo-b")}
    comp = composition(V2, observed=observed, imported={"a": "adopted-bucket"})
    assert comp.kept_metadata_name("a") == "demo-a"
    assert comp.kept_metadata_name("b") == "demo-b"
    assert comp.kept_metadata_name("missing") is None


def test_observed_external_name_of_a_malformed_observed_resource_is_none() -> None:
    """Observed state is read defensively (tests/test_robustness.py feeds any shape)."""
    observed = {
        "a": {"metadata": ["not", "a", "map"]},
        "b": {"metadata": {"name": 5}},
        "c": {"metadata": {"name": "mr-c", "annotations": {EXTERNAL_NAME: 7}}},
        "d": {"metadata": {"name": "mr-d", "annotations": "x"}},
    }
    comp = composition(V2, observed=observed)
    assert comp.observed_external_name("a") is None
    assert comp.observed_external_name("b") is None
    assert comp.observed_external_name("c") == "mr-c"
    assert comp.observed_external_name("d") == "mr-d"
