"""The Shoot schema derived from Gardener's proto (tools/gardener_shoot_schema.py).

Shoot has no upstream CRD; ``schemas/crds/gardener/core.gardener.cloud_shoots.yaml`` is derived
from ``generated.proto`` and the API reference. The official example Shoot
(``tests/fixtures/gardener/example-90-shoot.yaml``, gardener/gardener v1.149.3
``example/90-shoot.yaml``, unmodified) must validate; misspelt, misplaced and missing fields
must not.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.table import case
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "fixtures" / "gardener" / "example-90-shoot.yaml"


@pytest.fixture
def example() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE.read_text())


def test_the_official_example_shoot_validates(catalog, example):
    assert catalog.lookup("core.gardener.cloud/v1beta1", "Shoot") is not None
    assert catalog.validate(example) == []


def test_a_minimal_shoot_with_current_fields_validates(catalog):
    shoot = {
        "apiVersion": "core.gardener.cloud/v1beta1",
        "kind": "Shoot",
        "metadata": {"name": "pool", "namespace": "garden-c5c3"},
        "spec": {
            "cloudProfile": {"kind": "CloudProfile", "name": "ironcore"},
            "credentialsBindingName": "ironcore-eu-de-1",
            "region": "eu-de-1",
            "kubernetes": {"version": "1.33.4"},
            "provider": {
                "type": "ironcore",
                "workers": [
                    {
                        "name": "hv",
                        "minimum": 3,
                        "maximum": 5,
                        "machine": {"type": "bm-large", "image": {"name": "gardenlinux"}},
                        "labels": {"pool": "hv-pool-a"},
                    }
                ],
            },
        },
    }
    assert catalog.validate(shoot) == []


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        case(
            "a misspelt field deep in a worker (machine.typ) is refused as unknown, with "
            "its full path: the validator walks nested arrays and objects",
            lambda s: s["spec"]["provider"]["workers"][0]["machine"].update(typ="x"),
            "spec.provider.workers[0].machine.typ: unknown field 'typ'",
        ),
        case(
            "a field from another API level (workers on spec instead of spec.provider) is "
            "refused as unknown, not silently dropped",
            lambda s: s["spec"].update(workers=[]),
            "spec.workers: unknown field 'workers'",
        ),
        case(
            "a worker without its required name is refused naming the worker and the "
            "missing property",
            lambda s: s["spec"]["provider"]["workers"][0].pop("name"),
            "spec.provider.workers[0]: 'name' is a required property",
        ),
        case(
            "a string where the Shoot schema wants an integer (minimum) is refused naming "
            "the field and its wrong value",
            lambda s: s["spec"]["provider"]["workers"][0].update(minimum="three"),
            "spec.provider.workers[0].minimum: 'three' is not of type 'integer'",
        ),
        case(
            "an object where the schema wants an array (workers) is refused naming the "
            "field, so a list written as a map is caught",
            lambda s: s["spec"]["provider"].update(workers={"name": "w"}),
            "spec.provider.workers: {'name': 'w'} is not of type 'array'",
        ),
        case(
            "kubernetesConfig is inlined into kubeAPIServer: written as its own nested "
            "field it is unknown, so the validator knows inlined structs",
            lambda s: s["spec"].update(kubernetes={"kubeAPIServer": {"kubernetesConfig": {}}}),
            "spec.kubernetes.kubeAPIServer.kubernetesConfig: unknown field 'kubernetesConfig'",
        ),
    ],
)
def test_wrong_fields_fail(catalog, example, mutate, needle):
    shoot = copy.deepcopy(example)
    mutate(shoot)
    errors = catalog.validate(shoot)
    assert any(needle in e for e in errors), errors


def test_inlined_structs_put_their_fields_in_the_parent(catalog, example):
    """KubeAPIServerConfig embeds KubernetesConfig inline: featureGates sit directly in it."""
    shoot = copy.deepcopy(example)
    shoot["spec"]["kubernetes"] = {
        "version": "1.33.4",
        "kubeAPIServer": {"featureGates": {"SomeFeature": True}},
        "kubelet": {"featureGates": {"Other": False}, "maxPods": 110},
    }
    shoot["spec"]["addons"] = {"nginxIngress": {"enabled": False}}
    assert catalog.validate(shoot) == []


def test_the_deriver_finds_inline_fields_from_the_reference():
    tool = load_tool("gardener_shoot_schema")
    proto = (
        "message Outer {\n  optional Inner inner = 1;\n  optional string own = 2;\n"
        "  repeated Inner many = 3;\n}\n"
        "message Inner {\n  optional string a = 1;\n  map<string, bool> gates = 2;\n}\n"
    )
    reference = (
        '<h3 id="outer">Outer\n</h3>\n<table><tbody>\n'
        "<tr>\n<td>\n<code>a</code></br>\n</td>\n<td>\n<p>A</p>\n</td>\n</tr>\n"
        "<tr>\n<td>\n<code>gates</code></br>\n</td>\n<td>\n<em>(Optional)</em>\n</td>\n</tr>\n"
        "<tr>\n<td>\n<code>own</code></br>\n</td>\n<td>\n<em>(Optional)</em>\n</td>\n</tr>\n"
        "<tr>\n<td>\n<code>many</code></br>\n</td>\n<td>\n<em>(Optional)</em>\n</td>\n</tr>\n"
        "</tbody></table>\n"
    )
    builder = tool._Builder(tool.parse_proto(proto), tool.parse_reference(reference))
    schema = builder.message_schema("Outer", ("Outer",))
    assert sorted(schema["properties"]) == ["a", "gates", "many", "own"]
    assert schema["required"] == ["a"]
    assert schema["properties"]["gates"] == {
        "type": "object",
        "additionalProperties": {"type": "boolean"},
    }
    assert schema["properties"]["many"]["type"] == "array"
    assert builder.inlined == ["Outer.inner"]
