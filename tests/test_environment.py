"""EnvironmentConfig selection, merge order, the context environment and requirement iteration.

Crossplane calls the function again until the requirements it declares stop changing, so the
same composite must declare the same selectors every pass; a selector Crossplane has not
fetched yet is told apart from one that matched nothing.
"""

from __future__ import annotations

import pytest

from tests.support.cases import cluster_composite, environment_config
from tests.support.harness import observed_ready, request, step_input
from tests.support.table import case

CONTEXT_KEY = "apiextensions.crossplane.io/environment"
SOURCES = [
    {"name": "baseline"},
    {"matchLabels": {"cloud": {"fromFieldPath": "metadata.labels.cloud"}}, "optional": True},
    {"matchLabels": {"tier": {"value": "gold"}}, "optional": True},
]


#: GKE requires who may reach its public API endpoint; settings carry it for every test here.
GCP_ALLOWLIST = {
    "gcp": {
        "masterAuthorizedNetworks": [
            {"cidrBlock": "203.0.113.0/24", "displayName": "management cluster"}
        ]
    }
}


def cluster_step(**fields):
    fields["settings"] = {**GCP_ALLOWLIST, **fields.get("settings", {})}
    return step_input("cluster", environment=SOURCES, **fields)


def _machine(rsp) -> str:
    pools = [b for n, b in rsp.resources.items() if n.startswith("pool-")]
    return pools[0]["spec"]["forProvider"]["nodeConfig"]["machineType"] if pools else ""


def test_selectors_resolve_labels_from_the_composite(client):
    rsp = client.run(request(cluster_composite("gcp"), cluster_step()))
    assert rsp.requirements == {
        "environment-0": {
            "apiVersion": "apiextensions.crossplane.io/v1beta1",
            "kind": "EnvironmentConfig",
            "matchName": "baseline",
        },
        "environment-1": {
            "apiVersion": "apiextensions.crossplane.io/v1beta1",
            "kind": "EnvironmentConfig",
            "matchLabels": {"labels": {"cloud": "gcp"}},
        },
        "environment-2": {
            "apiVersion": "apiextensions.crossplane.io/v1beta1",
            "kind": "EnvironmentConfig",
            "matchLabels": {"labels": {"tier": "gold"}},
        },
    }


def test_not_fetched_yet_composes_nothing_and_asks_again(client):
    rsp = client.run(request(cluster_composite("gcp"), cluster_step()))
    assert rsp.resources == {}
    assert rsp.fatal == []
    assert set(rsp.requirements) == {"environment-0", "environment-1", "environment-2"}


def test_requirements_are_identical_across_iterations(client):
    composite = cluster_composite("gcp")
    first = client.run(request(composite, cluster_step()))
    fetched = {
        "environment-0": [environment_config("baseline", {"defaultMachineType": "e2-standard-4"})],
        "environment-1": [],
        "environment-2": [],
    }
    second = client.run(request(composite, cluster_step(), required=fetched))
    assert second.fatal == []
    assert first.requirements == second.requirements
    assert second.resources


def test_a_required_selection_that_matched_nothing_is_a_fatal_result(client):
    fetched = {"environment-0": [], "environment-1": [], "environment-2": []}
    rsp = client.run(request(cluster_composite("gcp"), cluster_step(), required=fetched))
    assert len(rsp.fatal) == 1
    assert "input.environment[0]" in rsp.fatal[0]
    assert "baseline" in rsp.fatal[0]


def test_later_sources_win_and_maps_merge_deeply(client):
    fetched = {
        "environment-0": [
            environment_config(
                "baseline",
                {
                    "defaultMachineType": "e2-standard-4",
                    "monitoring": {"enabled": True, "retention": "15d"},
                },
            )
        ],
        "environment-1": [
            environment_config("gcp", {"defaultMachineType": "n2-standard-8"}, cloud="gcp")
        ],
        "environment-2": [
            environment_config("gold-b", {"monitoring": {"retention": "90d"}}, tier="gold"),
            environment_config("gold-a", {"monitoring": {"retention": "30d"}}, tier="gold"),
        ],
    }
    observed: dict = {}
    for _ in range(6):  # node pools and releases wait for what they use: observe until settled
        rsp = client.run(
            request(cluster_composite("gcp"), cluster_step(), required=fetched, observed=observed)
        )
        observed = {name: observed_ready(body) for name, body in rsp.resources.items()}
    assert _machine(rsp) == "n2-standard-8"  # environment-1 beats environment-0
    prometheus = rsp.resource("release-kube-prometheus-stack")["spec"]["forProvider"]["values"]
    # Both gold configs match; they merge sorted by name, so gold-b (later) wins.
    assert prometheus["prometheus"]["prometheusSpec"]["retention"] == "90d"
    assert prometheus["alertmanager"]["enabled"] is True  # untouched keys survive the merge


def test_the_context_environment_is_the_base_and_is_passed_on(client):
    fetched = {
        "environment-0": [environment_config("baseline", {"ingress_replicas": 5})],
        "environment-1": [],
        "environment-2": [],
    }
    context = {CONTEXT_KEY: {"defaultMachineType": "from-context", "ingress_replicas": 1}}
    rsp = client.run(
        request(cluster_composite("gcp"), cluster_step(), required=fetched, context=context)
    )
    assert rsp.fatal == []
    merged = rsp.context[CONTEXT_KEY]
    assert merged["defaultMachineType"] == "from-context"  # from the earlier step
    assert merged["ingress_replicas"] == 5  # the EnvironmentConfig wins over the context


def test_step_settings_sit_under_the_environment(client):
    fetched = {
        "environment-0": [environment_config("baseline", {"defaultMachineType": "env-wins"})],
        "environment-1": [],
        "environment-2": [],
    }
    step = cluster_step(settings={"defaultMachineType": "settings-lose", "ingress_replicas": 4})
    rsp = client.run(request(cluster_composite("gcp"), step, required=fetched))
    assert rsp.fatal == []
    assert rsp.context[CONTEXT_KEY]["defaultMachineType"] == "env-wins"


def test_a_label_read_from_a_missing_composite_field_names_it(client):
    composite = cluster_composite("gcp")
    step = step_input(
        "cluster",
        environment=[{"matchLabels": {"plane": {"fromFieldPath": "metadata.labels.planeType"}}}],
    )
    rsp = client.run(request(composite, step))
    assert len(rsp.fatal) == 1
    assert "metadata.labels.planeType" in rsp.fatal[0]


def test_an_environment_source_with_name_and_labels_is_rejected(client):
    step = step_input("cluster", environment=[{"name": "x", "matchLabels": {"a": {"value": "b"}}}])
    rsp = client.run(request(cluster_composite("gcp"), step))
    assert len(rsp.fatal) == 1
    assert "input.environment[0]" in rsp.fatal[0]
    assert "exactly one of name or matchLabels" in rsp.fatal[0]


def test_an_undefined_template_variable_names_the_release(client):
    """A chart values template that reads a missing variable is a clear error, not a crash."""
    from fnplatform.errors import InputError
    from fnplatform.library.templates import render_values

    try:
        render_values("ingress-nginx", "replicas: {{ missing_value }}", {})
    except InputError as err:
        assert "helm release ingress-nginx values" in str(err)
        assert "missing_value" in str(err)
    else:
        raise AssertionError("undefined variable did not raise")


def test_an_optional_source_the_composite_cannot_fill_in_selects_nothing(client):
    """A cluster without a planeType label gets no plane-type config, not an error."""
    composite = cluster_composite("gcp")
    composite["metadata"]["labels"].pop("planeType", None)
    step = step_input(
        "cluster",
        environment=[
            {"name": "baseline"},
            {
                "matchLabels": {"planeType": {"fromFieldPath": "metadata.labels.planeType"}},
                "optional": True,
            },
        ],
    )
    fetched = {
        "environment-0": [
            environment_config("baseline", {"defaultMachineType": "e2", **GCP_ALLOWLIST})
        ]
    }
    rsp = client.run(request(composite, step, required=fetched))
    assert rsp.fatal == []
    assert set(rsp.requirements) == {"environment-0"}
    assert rsp.resources


def test_the_shipped_cluster_composition_composes_an_xr_without_plane_type(client):
    """What README and docs/cluster.md say: the planeType source is optional and skipped."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    composition = yaml.safe_load((root / "apis" / "cluster" / "composition.yaml").read_text())
    step = composition["spec"]["pipeline"][0]["input"]
    sources = step["environment"]
    plane_type = [i for i, s in enumerate(sources) if "planeType" in (s.get("matchLabels") or {})]
    assert plane_type and all(sources[i].get("optional") for i in plane_type)
    composite = cluster_composite("gcp")
    composite["metadata"]["labels"].pop("planeType", None)
    first = client.run(request(composite, step))
    assert first.fatal == []
    assert not {f"environment-{i}" for i in plane_type} & set(first.requirements)
    fetched = {key: [] for key in first.requirements}
    fetched["environment-0"] = [
        environment_config(
            "baseline",
            {
                "defaultMachineType": "e2",
                # the GKE endpoint is public for Crossplane's providers: an allowlist is required
                "gcp": {
                    "masterAuthorizedNetworks": [
                        {"cidrBlock": "203.0.113.0/24", "displayName": "management"}
                    ]
                },
            },
        )
    ]
    rsp = client.run(request(composite, step, required=fetched))
    assert rsp.fatal == [] and rsp.resources


# -- fromFieldPath in Crossplane's field-path syntax (fnplatform.fieldpath) ----------------


def _labelled(path: str, *, optional: bool = False) -> dict:
    source: dict = {"matchLabels": {"cloud": {"fromFieldPath": path}}}
    return {**source, "optional": True} if optional else source


def _label_requirement(rsp, key: str = "environment-0") -> dict:
    return rsp.requirements[key]["matchLabels"]["labels"]


def test_a_bracketed_label_path_selects_what_the_dotted_one_does(client):
    """``metadata.labels[cloud]`` is the label ``cloud``, for a required and an optional source
    alike (it once read as nothing: "not set on the composite", or nothing selected)."""
    composite = cluster_composite("gcp")
    dotted = client.run(
        request(composite, step_input("cluster", environment=[_labelled("metadata.labels.cloud")]))
    )
    assert _label_requirement(dotted) == {"cloud": "gcp"}
    for optional in (False, True):
        for path in ("metadata.labels[cloud]", "metadata.labels['cloud']"):
            rsp = client.run(
                request(
                    composite,
                    step_input("cluster", environment=[_labelled(path, optional=optional)]),
                )
            )
            assert rsp.fatal == [], (path, rsp.fatal)
            assert rsp.requirements == dotted.requirements, path


def test_a_label_key_with_dots_and_slashes_is_read_in_brackets(client):
    composite = cluster_composite("gcp")
    step = step_input(
        "cluster",
        environment=[
            {
                "matchLabels": {
                    "claim": {"fromFieldPath": "metadata.labels[crossplane.io/claim-name]"}
                }
            },
            {
                "matchLabels": {
                    "pool": {"fromFieldPath": "spec.pools[pool1].autoscaling.maxNodeCount"}
                },
                "optional": True,
            },
        ],
    )
    rsp = client.run(request(composite, step))
    assert rsp.fatal == []
    assert _label_requirement(rsp) == {"claim": "prod"}
    assert _label_requirement(rsp, "environment-1") == {"pool": "4"}


def test_the_dotted_form_of_a_key_with_periods_is_another_path(client):
    """Outside brackets a period separates fields, as in Crossplane: the label is not read."""
    step = step_input(
        "cluster",
        environment=[
            {
                "matchLabels": {
                    "claim": {"fromFieldPath": "metadata.labels.crossplane.io/claim-name"}
                }
            },
        ],
    )
    rsp = client.run(request(cluster_composite("gcp"), step))
    assert rsp.fatal == [
        "metadata.labels.crossplane.io/claim-name: required to select "
        "EnvironmentConfigs (input environment[0].matchLabels.claim) but not "
        "set on the composite"
    ]


def test_a_bracketed_label_the_composite_lacks_is_unset(client):
    composite = cluster_composite("gcp")
    required = client.run(
        request(
            composite,
            step_input(
                "cluster",
                environment=[
                    {"matchLabels": {"plane": {"fromFieldPath": "metadata.labels[planeType]"}}}
                ],
            ),
        )
    )
    assert required.fatal == [
        "metadata.labels[planeType]: required to select EnvironmentConfigs "
        "(input environment[0].matchLabels.plane) but not set on the "
        "composite"
    ]
    settings = {**GCP_ALLOWLIST, "defaultMachineType": "e2-standard-4"}
    optional = client.run(
        request(
            composite,
            step_input(
                "cluster",
                settings=settings,
                environment=[
                    {
                        "matchLabels": {"plane": {"fromFieldPath": "metadata.labels[planeType]"}},
                        "optional": True,
                    }
                ],
            ),
        )
    )
    assert optional.fatal == [] and optional.requirements == {} and optional.resources


@pytest.mark.parametrize("optional", [False, True])
def test_a_path_that_cannot_be_parsed_is_a_fatal_result_naming_the_input_field(client, optional):
    """Even for an optional source: the Composition is wrong, whatever the composite holds."""
    environment = [
        {"name": "baseline"},
        {"name": "org"},
        _labelled("metadata.labels[cloud", optional=optional),
    ]
    rsp = client.run(
        request(cluster_composite("gcp"), step_input("cluster", environment=environment))
    )
    assert rsp.fatal == [
        "input.environment[2].matchLabels.cloud.fromFieldPath: cannot parse "
        "\"metadata.labels[cloud\": unterminated '[' at position 15"
    ]
    assert rsp.requirements == {} and rsp.resources == {}


@pytest.mark.parametrize(
    ("path", "says"),
    [
        case(
            "an index into the labels map cannot be read: the fatal result names the path "
            "and what it went through, and the input that selects with it",
            "metadata.labels[0]",
            "cannot be read from the composite (metadata.labels: not an array)",
        ),
        case(
            "a key into a string (the name) cannot be read: named the same way, not a traceback",
            "metadata.name[first]",
            "cannot be read from the composite (metadata.name: not an object)",
        ),
        case(
            "a path to the whole labels map selects nothing: a label value must be a "
            "string, so it is refused saying it is a map",
            "metadata.labels",
            "is a map on the composite, not a label value",
        ),
    ],
)
@pytest.mark.parametrize("optional", [False, True])
def test_a_path_that_cannot_go_through_the_composite_names_it(client, path, says, optional):
    rsp = client.run(
        request(
            cluster_composite("gcp"),
            step_input("cluster", environment=[_labelled(path, optional=optional)]),
        )
    )
    assert rsp.fatal == [f"{path}: {says}; input environment[0].matchLabels.cloud selects with it"]


def test_an_empty_path_is_refused_naming_the_input_field(client):
    rsp = client.run(
        request(
            cluster_composite("gcp"),
            step_input("cluster", environment=[_labelled("", optional=True)]),
        )
    )
    assert rsp.fatal == [
        "input.environment[0].matchLabels.cloud.fromFieldPath: must name a "
        "field, such as metadata.labels[cloud]"
    ]
