"""Tests for the offline CRD validator in tests/support/schemas.py."""

from __future__ import annotations

import copy
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.schemas import (
    DEFAULT_ROOT,
    assert_valid,
    escape_property,
    load_catalog,
)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def only(errors: list[str], *needles: str) -> None:
    """Assert there is exactly one error and that it mentions every needle."""
    assert len(errors) == 1, errors
    for needle in needles:
        assert needle in errors[0], errors


# --------------------------------------------------------------------------- fixtures


def gke_cluster(**for_provider):
    fp = {"location": "europe-west1", "initialNodeCount": 1, **for_provider}
    return {
        "apiVersion": "container.gcp.upbound.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "gke", "labels": {"platform.example.org/owner": "team-a"}},
        "spec": {"forProvider": fp, "providerConfigRef": {"name": "default"}},
    }


VALID_OBJECTS = [
    {
        "apiVersion": "compute.gcp.upbound.io/v1beta1",
        "kind": "Network",
        "metadata": {"name": "vpc"},
        "spec": {"forProvider": {"autoCreateSubnetworks": False, "routingMode": "REGIONAL"}},
    },
    {
        "apiVersion": "compute.gcp.upbound.io/v1beta2",
        "kind": "Subnetwork",
        "metadata": {"name": "subnet"},
        "spec": {
            "forProvider": {
                "region": "europe-west1",
                "ipCidrRange": "10.0.0.0/20",
                "networkRef": {"name": "vpc"},
                "secondaryIpRange": [{"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"}],
            }
        },
    },
    gke_cluster(
        nodeConfig={"machineType": "e2-standard-4", "oauthScopes": ["cloud-platform"]},
        removeDefaultNodePool=True,
    ),
    {
        "apiVersion": "dns.gcp.upbound.io/v1beta2",
        "kind": "ManagedZone",
        "metadata": {"name": "zone"},
        "spec": {"forProvider": {"dnsName": "example.org."}},
    },
    {
        "apiVersion": "sqs.aws.upbound.io/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "jobs", "annotations": {"crossplane.io/external-name": "jobs"}},
        "spec": {
            "forProvider": {
                "region": "eu-west-1",
                "visibilityTimeoutSeconds": 30,
                "tags": {"team": "a"},
            },
            "deletionPolicy": "Delete",
        },
    },
    {
        "apiVersion": "eks.aws.upbound.io/v1beta1",
        "kind": "PodIdentityAssociation",
        "metadata": {"name": "pia"},
        "spec": {
            "forProvider": {
                "region": "eu-west-1",
                "clusterName": "c",
                "namespace": "apps",  # CEL sees it as __namespace__
                "serviceAccount": "sa",
                "roleArn": "arn:aws:iam::123456789012:role/r",
            }
        },
    },
    {
        "apiVersion": "azure.upbound.io/v1beta1",
        "kind": "ResourceGroup",
        "metadata": {"name": "rg"},
        "spec": {"forProvider": {"location": "westeurope"}},
    },
    {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "worker", "namespace": "apps"},
        "spec": {
            "scaleTargetRef": {"name": "worker"},
            "minReplicaCount": 0,
            "maxReplicaCount": 10,
            "triggers": [
                {"type": "aws-sqs-queue", "metadata": {"queueURL": "https://q", "queueLength": "5"}}
            ],
        },
    },
    {
        "apiVersion": "kubernetes.crossplane.io/v1alpha2",
        "kind": "Object",
        "metadata": {"name": "ns"},
        "spec": {
            "forProvider": {
                "manifest": {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": "apps", "labels": {"team": "a"}},
                    "anything": {"goes": ["here"]},
                }
            },
            "providerConfigRef": {"name": "in-cluster"},
        },
    },
    {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": "vpc-in-use"},
        "spec": {
            "of": {
                "apiVersion": "compute.gcp.upbound.io/v1beta1",
                "kind": "Network",
                "resourceRef": {"name": "vpc"},
            },
            "by": {
                "apiVersion": "compute.gcp.upbound.io/v1beta2",
                "kind": "Subnetwork",
                "resourceRef": {"name": "subnet"},
            },
        },
    },
    {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "env"},
        "data": {"region": "eu", "nested": {"list": [1, 2, 3]}},
    },
    {
        "apiVersion": "helm.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {"name": "rel"},
        "spec": {
            "forProvider": {
                "chart": {
                    "name": "keda",
                    "repository": "https://kedacore.github.io/charts",
                    "version": "2.20.2",
                },
                "namespace": "keda",
                "values": {"any": {"thing": True}},
            }
        },
    },
    {
        "apiVersion": "ceph.rook.io/v1",
        "kind": "CephBlockPool",
        "metadata": {"name": "pool", "namespace": "rook-ceph"},
        "spec": {"failureDomain": "host", "replicated": {"size": 3}},
    },
]


# --------------------------------------------------------------------------- catalog


def test_catalog_indexes_versions(catalog):
    assert len(catalog) > 100
    gke = catalog.lookup("container.gcp.upbound.io/v1beta2", "Cluster")
    assert gke is not None and gke.served and gke.storage
    assert catalog.storage_version("container.gcp.upbound.io", "Cluster").version == "v1beta2"
    # upjet: both scopes, so namespaced composites' bodies are checked too
    gke_m = catalog.lookup("container.gcp.m.upbound.io/v1beta1", "Cluster")
    assert gke_m is not None and gke_m.served
    assert catalog.lookup("gcp.m.upbound.io/v1beta1", "ClusterProviderConfig") is not None
    assert catalog.lookup("ceph.rook.io/v1", "CephObjectStore") is not None  # multi-doc file


def test_catalog_is_cached():
    assert load_catalog() is load_catalog()
    assert load_catalog(DEFAULT_ROOT) is load_catalog()


def test_derived_schemas_have_no_descriptions_but_keep_fields(catalog):
    net = catalog.lookup("compute.gcp.upbound.io/v1beta1", "Network").schema
    fp = net["properties"]["spec"]["properties"]["forProvider"]
    assert "description" not in fp
    assert "description" in fp["properties"]  # the GCP *field* named description survives
    spec = catalog.lookup("dns.gcp.upbound.io/v1beta2", "ManagedZone").schema["properties"]["spec"]
    assert spec["x-kubernetes-validations"]
    assert spec["properties"]["managementPolicies"]["default"] == ["*"]


# --------------------------------------------------------------------------- accepts


@pytest.mark.parametrize("obj", VALID_OBJECTS, ids=lambda o: f"{o['apiVersion']}-{o['kind']}")
def test_accepts_valid_objects(catalog, obj):
    before = copy.deepcopy(obj)
    assert catalog.validate(obj) == []
    assert obj == before  # defaults are applied to a copy


def test_assert_valid_passes_and_fails(catalog):
    assert_valid(VALID_OBJECTS)
    bad = gke_cluster(initialNodeCount="3")
    with pytest.raises(AssertionError, match=r"(?s)1 schema error.*initialNodeCount"):
        assert_valid([*VALID_OBJECTS, bad])


# --------------------------------------------------------------------------- rejects


def test_unknown_field_in_for_provider(catalog):
    errors = catalog.validate(gke_cluster(machineType="e2-standard-4"))
    only(
        errors,
        "container.gcp.upbound.io/v1beta2 Cluster gke:",
        "spec.forProvider.machineType",
        "unknown field",
    )


def test_unknown_nested_field(catalog):
    errors = catalog.validate(gke_cluster(nodeConfig={"machineType": "e2", "diskSize": 10}))
    only(errors, "spec.forProvider.nodeConfig.diskSize", "unknown field")


def test_unknown_top_level_and_spec_fields(catalog):
    obj = gke_cluster()
    obj["spc"] = {}
    obj["spec"]["deletionPolicy"] = "Delete"
    obj["spec"]["managementPolicy"] = "Default"  # old singular field
    errors = catalog.validate(obj)
    assert len(errors) == 2, errors
    assert any("(root)" not in e and ".spc" not in e and "spc: unknown" in e for e in errors)
    assert any("spec.managementPolicy: unknown field" in e for e in errors)


def test_wrong_type(catalog):
    only(
        catalog.validate(gke_cluster(initialNodeCount="3")),
        "spec.forProvider.initialNodeCount",
        "is not of type 'number'",
    )
    # v1beta2 turned the Terraform blocks into objects; a v1beta1-style list is a type error
    only(
        catalog.validate(gke_cluster(nodeConfig=[{"machineType": "e2"}])),
        "spec.forProvider.nodeConfig",
        "is not of type 'object'",
    )


def test_enum_violation(catalog):
    obj = gke_cluster()
    obj["spec"]["deletionPolicy"] = "Keep"
    only(catalog.validate(obj), "spec.deletionPolicy", "is not one of ['Orphan', 'Delete']")


def test_openapi_required_field(catalog):
    obj = gke_cluster()
    del obj["spec"]["forProvider"]["location"]
    only(catalog.validate(obj), "spec.forProvider", "'location' is a required property")


def test_cel_required_parameter_azure_location(catalog):
    crd = catalog.lookup("azure.upbound.io/v1beta1", "ResourceGroup")
    rules = crd.schema["properties"]["spec"]["x-kubernetes-validations"]
    assert [r["message"] for r in rules] == ["spec.forProvider.location is a required parameter"]
    assert "has(self.forProvider.location)" in rules[0]["rule"]

    obj = {
        "apiVersion": "azure.upbound.io/v1beta1",
        "kind": "ResourceGroup",
        "metadata": {"name": "rg"},
        "spec": {"forProvider": {"tags": {"a": "b"}}},
    }
    # managementPolicies is absent: its default ["*"] is applied before the rule runs
    only(
        catalog.validate(obj),
        "ResourceGroup rg: spec:",
        "spec.forProvider.location is a required parameter",
    )

    # ... also satisfiable through initProvider
    ok = copy.deepcopy(obj)
    ok["spec"]["initProvider"] = {"location": "westeurope"}
    assert catalog.validate(ok) == []

    # ... and not required when the resource is only observed
    observed = copy.deepcopy(obj)
    observed["spec"]["managementPolicies"] = ["Observe"]
    assert catalog.validate(observed) == []


def test_cel_required_parameter_gcp_dns(catalog):
    obj = {
        "apiVersion": "dns.gcp.upbound.io/v1beta2",
        "kind": "ManagedZone",
        "metadata": {"name": "zone"},
        "spec": {"forProvider": {"description": "no dnsName"}},
    }
    only(catalog.validate(obj), "spec.forProvider.dnsName is a required parameter")


def test_cel_escaped_property_name(catalog):
    obj = copy.deepcopy(next(o for o in VALID_OBJECTS if o["kind"] == "PodIdentityAssociation"))
    del obj["spec"]["forProvider"]["namespace"]
    only(catalog.validate(obj), "spec.forProvider.namespace is a required parameter")


def test_cel_keda_min_max(catalog):
    obj = copy.deepcopy(next(o for o in VALID_OBJECTS if o["kind"] == "ScaledObject"))
    obj["spec"]["minReplicaCount"] = 20
    only(catalog.validate(obj), "minReplicaCount must be less than or equal to maxReplicaCount")
    del obj["spec"]["maxReplicaCount"]  # rule falls back to 100
    assert catalog.validate(obj) == []


def test_cel_usage_by_or_reason(catalog):
    obj = copy.deepcopy(next(o for o in VALID_OBJECTS if o["kind"] == "Usage"))
    del obj["spec"]["by"]
    only(catalog.validate(obj), 'either "spec.by" or "spec.reason" must be specified')
    obj["spec"]["reason"] = "protect the network"
    assert catalog.validate(obj) == []


def test_unknown_version_not_served_anymore(catalog):
    # GCP v3 removed v1beta1 Subnetwork; only v1beta2 is served.
    obj = {
        "apiVersion": "compute.gcp.upbound.io/v1beta1",
        "kind": "Subnetwork",
        "metadata": {"name": "s"},
        "spec": {"forProvider": {}},
    }
    only(
        catalog.validate(obj),
        "compute.gcp.upbound.io/v1beta1 Subnetwork s: (root):",
        "unknown version",
        "served versions: v1beta2",
    )


def test_unknown_kind_and_group(catalog):
    only(
        catalog.validate({"apiVersion": "compute.gcp.upbound.io/v1beta1", "kind": "Netwrk"}),
        "unknown kind 'Netwrk'",
    )
    only(
        catalog.validate({"apiVersion": "dns.azure.upbound.io/v1beta1", "kind": "Zone"}),
        "unknown apiVersion/kind",
    )
    only(catalog.validate({"kind": "Zone"}), "missing apiVersion")


def test_metadata_checks(catalog):
    obj = gke_cluster()
    obj["metadata"]["labels"] = {"ok": "yes", "bad": "has spaces", "num": 3}
    obj["metadata"]["annotations"] = {"a": True}
    obj["metadata"]["ownerReferences"] = []  # other ObjectMeta fields are not checked
    errors = catalog.validate(obj)
    assert len(errors) == 3, errors
    assert any("metadata.labels.bad" in e for e in errors)
    assert any("metadata.labels.num" in e for e in errors)
    assert any("metadata.annotations.a" in e for e in errors)


def test_embedded_resource_needs_api_version_and_kind(catalog):
    obj = copy.deepcopy(next(o for o in VALID_OBJECTS if o["kind"] == "Object"))
    del obj["spec"]["forProvider"]["manifest"]["kind"]
    only(catalog.validate(obj), "spec.forProvider.manifest", "'kind' is a required property")


def test_deprecated_version_warning(catalog):
    obj = {
        "apiVersion": "s3.aws.upbound.io/v1beta1",
        "kind": "Bucket",
        "metadata": {"name": "b"},
        "spec": {"forProvider": {"region": "eu-west-1"}},
    }
    assert catalog.validate(obj) == []
    (warning,) = catalog.warnings(obj)
    assert "deprecated" in warning and "v1beta2" in warning
    assert catalog.warnings(VALID_OBJECTS[0]) == []


# --------------------------------------------------------------------------- synthetic CRD

SYNTHETIC = textwrap.dedent(
    """
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.org
    spec:
      group: example.org
      names: {kind: Widget, plural: widgets}
      scope: Namespaced
      versions:
      - name: v1alpha1
        served: false
        storage: false
        schema:
          openAPIV3Schema: {type: object}
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {type: string}
              kind: {type: string}
              metadata: {type: object}
              spec:
                type: object
                x-kubernetes-validations:
                - rule: self.mode == 'a'
                  message: mode must be a
                - rule: self.size <= oldSelf.size
                  message: transition rules are skipped
                - rule: "!has(self.port) || self.port != 0"
                  messageExpression: "'port must not be ' + string(self.port)"
                - rule: self.name.lowerAscii() == self.name
                  message: name must be lowercase
                  fieldPath: .name
                properties:
                  mode: {type: string, default: a}
                  name: {type: string}
                  size: {type: integer}
                  port:
                    x-kubernetes-int-or-string: true
                    anyOf: [{type: integer}, {type: string}]
                  nothing: {type: string, nullable: true}
                  free:
                    type: object
                    x-kubernetes-preserve-unknown-fields: true
                  empty: {type: object}
                  tags:
                    type: array
                    items: {type: string}
                    x-kubernetes-list-type: set
                  entries:
                    type: array
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [key]
                    items:
                      type: object
                      required: [key]
                      properties:
                        key: {type: string}
                        value: {type: string}
    """
)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root: Path = tmp_path_factory.mktemp("crds")
    (root / "example").mkdir()
    (root / "example" / "widgets.yaml").write_text(SYNTHETIC)
    return load_catalog(root)


def widget(**spec):
    return {
        "apiVersion": "example.org/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"name": "w", **spec},
    }


def test_synthetic_valid(synthetic):
    assert (
        synthetic.validate(
            widget(
                port="http",
                nothing=None,
                free={"x": {"y": 1}},
                empty={},
                tags=["a", "b"],
                entries=[{"key": "a"}, {"key": "b", "value": "v"}],
            )
        )
        == []
    )
    assert synthetic.validate(widget(port=8080)) == []


def test_synthetic_unserved_version(synthetic):
    obj = widget()
    obj["apiVersion"] = "example.org/v1alpha1"
    only(synthetic.validate(obj), "exists but is not served", "served versions: v1")


def test_synthetic_cel_default_and_errors(synthetic):
    only(synthetic.validate(widget(mode="b")), "spec: mode must be a")
    only(synthetic.validate(widget(port=0)), "port must not be 0")  # messageExpression
    only(synthetic.validate(widget(name="W")), "spec.name: name must be lowercase")
    # reading a missing field without has() is an evaluation error -> failure
    obj = widget()
    del obj["spec"]["name"]
    only(synthetic.validate(obj), "name must be lowercase", "rule evaluation error")


def test_synthetic_openapi_extensions(synthetic):
    only(synthetic.validate(widget(port=1.5)), "spec.port")
    only(synthetic.validate(widget(size=None)), "spec.size", "is not of type 'integer'")
    only(synthetic.validate(widget(empty={"x": 1})), "spec.empty.x", "unknown field")
    only(synthetic.validate(widget(tags=["a", "a"])), "spec.tags[1]", "duplicate")
    only(
        synthetic.validate(widget(entries=[{"key": "a"}, {"key": "a"}])),
        "spec.entries[1]",
        "duplicate",
    )


def test_escape_property():
    assert escape_property("namespace") == "__namespace__"
    assert escape_property("a-b.c/d") == "a__dash__b__dot__c__slash__d"
    assert escape_property("x__y") == "x__underscores__y"
    assert escape_property("1abc") is None
    assert escape_property("a b") is None


# --------------------------------------------------------------------------- speed


def test_validating_100_objects_is_fast(catalog):
    objs = [copy.deepcopy(VALID_OBJECTS[i % len(VALID_OBJECTS)]) for i in range(100)]
    assert_valid(objs)  # warm up validators and the CEL program cache
    start = time.perf_counter()
    assert_valid(objs)
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"validating 100 objects took {elapsed:.2f}s"
