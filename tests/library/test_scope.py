"""``scope``: what a Crossplane v2 namespaced composite composes instead of each body.

Every row emits through :meth:`~fnplatform.composition.Composition.emit` of a namespaced
composite (which calls :func:`~fnplatform.composition.namespaced.to_namespaced`) or runs the
finishing step
:func:`~fnplatform.composition.namespaced.settle_secret_refs`, and says what the namespaced form
makes of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.clouds.aws.kinds import BUCKET, DB_INSTANCE
from fnplatform.composition.namespaced import (
    provider_config_kind,
    settle_secret_refs,
    unexpressed_summary,
)
from fnplatform.errors import InputError
from fnplatform.library.kubernetes import KUBERNETES_PROVIDER_CONFIG, OBJECT

from tests.library.support import composition
from tests.support.table import case

NAMESPACED_XR: dict[str, Any] = {
    "apiVersion": "x.io/v1",
    "kind": "XThing",
    "metadata": {"name": "demo", "namespace": "team-a"},
    "spec": {},
}


def namespaced(env: dict[str, Any] | None = None) -> Any:
    return composition(composite=NAMESPACED_XR, env=env)


def test_a_cluster_scoped_composite_keeps_every_body() -> None:
    # the v1 form: nothing rewritten, no namespace
    comp = composition()
    body = comp.emit("bucket", BUCKET.new({"region": "eu-west-1"}))
    assert body["apiVersion"] == "s3.aws.upbound.io/v1beta2"
    assert "namespace" not in body["metadata"]
    assert body["spec"]["providerConfigRef"] == {"name": "default"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        case(
            ("the twin kind in the composite's namespace, its ProviderConfig a cluster-wide one"),
            {},
            {"providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}},
        ),
        case(
            "deletionPolicy Orphan becomes every management policy but Delete",
            {"deletionPolicy": "Orphan"},
            {
                "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
                "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"],
            },
        ),
        case(
            "a builder's own narrower policies stay narrow (only Delete goes)",
            {"deletionPolicy": "Orphan", "managementPolicies": ["Observe", "Create", "Delete"]},
            {
                "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
                "managementPolicies": ["Observe", "Create"],
            },
        ),
        case(
            "deletionPolicy Delete is the namespaced default: just dropped",
            {"deletionPolicy": "Delete"},
            {"providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"}},
        ),
    ],
    ids=["twin", "orphan", "narrow-policies", "delete"],
)
def test_a_managed_body_becomes_its_twin(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    comp = namespaced()
    body = BUCKET.new({"region": "eu-west-1"})
    body["spec"].update(spec)
    emitted = comp.emit("bucket", body)
    assert (emitted["apiVersion"], emitted["kind"]) == ("s3.aws.m.upbound.io/v1beta1", "Bucket")
    assert emitted["metadata"]["namespace"] == "team-a"
    # (forProvider is the platform's tags' concern, the same in both forms)
    assert {k: v for k, v in emitted["spec"].items() if k != "forProvider"} == expected
    assert "bucket" in comp.desired


def test_a_kind_without_a_twin_is_left_out_and_named() -> None:
    # a Composition can't be composed by a namespaced composite: named, not dropped silently
    comp = namespaced()
    comp.emit(
        "composition",
        {"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition", "spec": {}},
    )
    assert "composition" not in comp.desired
    assert comp.notes.unexpressed == {
        "composition": (
            "apiextensions.crossplane.io/v1 Composition not composed: cluster-scoped, without a "
            "namespaced twin"
        )
    }


def test_a_connection_secret_moves_to_the_composite_namespace() -> None:
    # written where the namespaced resource can write: its own namespace
    comp = namespaced()
    body = DB_INSTANCE.new({"region": "eu-west-1"})
    body["spec"]["writeConnectionSecretToRef"] = {"name": "db", "namespace": "crossplane-system"}
    emitted = comp.emit("db", body)
    assert emitted["spec"]["writeConnectionSecretToRef"] == {"name": "db"}
    assert comp.notes.relocated_secrets == {("crossplane-system", "db")}


def test_a_composed_provider_config_is_named_as_namespaced() -> None:
    # usable from its namespace only: said in NamespacedForm, and refs to it use its kind
    comp = namespaced()
    comp.emit("kubeconfig", KUBERNETES_PROVIDER_CONFIG.new({}) | {"metadata": {"name": "pc"}})
    assert ("kubernetes", "pc") in comp.notes.composed_provider_configs
    assert "only resources in namespace team-a can use it" in comp.notes.unexpressed["kubeconfig"]
    assert provider_config_kind(comp, "kubernetes", "pc") == "ProviderConfig"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        case("the providers' own default", {}, "ClusterProviderConfig"),
        case(
            "one kind for every provider",
            {"providerConfigKind": "ProviderConfig"},
            "ProviderConfig",
        ),
        case(
            "a kind per provider; another provider's entry doesn't apply",
            {"providerConfigKind": {"aws": "ProviderConfig"}},
            "ProviderConfig",
        ),
        case(
            ("another provider's per-provider kind leaves this one at the default"),
            {"providerConfigKind": {"gcp": "ProviderConfig"}},
            "ClusterProviderConfig",
        ),
        case(
            "anything else is an error naming the key it was read from",
            {"providerConfigKind": {"aws": "Secret"}},
            InputError(
                "environment.providerConfigKind.aws",
                "must be one of ClusterProviderConfig, ProviderConfig",
            ),
        ),
    ],
    ids=["default", "one", "by-provider", "other-provider", "invalid"],
)
def test_provider_config_kind(env: dict[str, Any], expected: str | InputError) -> None:
    comp = namespaced(env)
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            provider_config_kind(comp, "aws", "default")
        assert (err.value.field, err.value.reason) == (expected.field, expected.reason)
    else:
        assert provider_config_kind(comp, "aws", "default") == expected


def object_reading(namespace: str) -> dict[str, Any]:
    """A provider-kubernetes ProviderConfig reading a kubeconfig Secret in ``namespace``."""
    return {
        **KUBERNETES_PROVIDER_CONFIG.new({}),
        "metadata": {"name": "remote"},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {"name": "kubeconfig", "namespace": namespace, "key": "kubeconfig"},
            }
        },
    }


@pytest.mark.parametrize(
    ("secret_namespace", "relocated", "expected_namespace", "unexpressed"),
    [
        case(
            ("a Secret the composite's own resources write (relocated): read from its namespace"),
            "crossplane-system",
            True,
            "team-a",
            {},
        ),
        case("already in the composite's namespace", "team-a", False, "team-a", {}),
        case(
            "another namespace's Secret can't be read across: kept, and named",
            "platform",
            False,
            "platform",
            {"pc spec.credentials.secretRef": "reads Secret platform/kubeconfig across namespaces"},
        ),
    ],
    ids=["relocated", "local", "across"],
)
def test_settle_secret_refs(
    secret_namespace: str, relocated: bool, expected_namespace: str, unexpressed: dict[str, str]
) -> None:
    comp = namespaced()
    if relocated:
        comp.notes.relocated_secrets.add((secret_namespace, "kubeconfig"))
    comp.emit("pc", object_reading(secret_namespace))
    comp.notes.unexpressed.pop("pc", None)  # the composed ProviderConfig's own note
    settle_secret_refs(comp)
    ref = comp.desired["pc"].body["spec"]["credentials"]["secretRef"]
    assert ref["namespace"] == expected_namespace
    assert comp.notes.unexpressed == unexpressed


def test_the_summary_is_sorted() -> None:
    # one condition message, the same whatever order things were emitted in
    assert unexpressed_summary({"b": "two", "a": "one"}) == "a: one; b: two"


def test_an_object_becomes_the_namespaced_object() -> None:
    # provider-kubernetes' namespaced Object, at the version taking the same body
    emitted = namespaced().emit("ns", OBJECT.new({"manifest": {"kind": "Namespace"}}))
    assert (emitted["apiVersion"], emitted["kind"]) == (
        "kubernetes.m.crossplane.io/v1alpha1",
        "Object",
    )
