"""What a user reads when their input is wrong (issue 13, items 9 to 11), over gRPC.

- An unknown field in the composite's spec is what an API server would prune: a warning that
  names it and the closest valid field, and composition goes on without it.
- An unknown field in EnvironmentConfig data a module reads, or an ``import.resources`` name
  that matches nothing, would build the wrong thing: a fatal result naming it, with a guess.
- Booleans are booleans; CIDRs are checked the same on every cloud.
- Messages are plain words: no pydantic phrasing, no regular expression, the exact path, only
  the modules this release has, and a composite of another kind is named as such.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from tests.support.cases import async_actor_case, cluster_case, environment_config
from tests.support.harness import Rendered
from tests.support.table import case

PYDANTIC_PHRASES = (
    "Extra inputs are not permitted",
    "Value error,",
    "instance of",
    "Input should be",
    "String should match",
    "validation error",
)


def _run(
    client: Any,
    cloud: str = "gcp",
    *,
    spec: dict[str, Any] | None = None,
    env: dict[str, Any] | None = None,
    labels: dict[str, Any] | None = None,
    composite: dict[str, Any] | None = None,
    module: str | None = None,
) -> Rendered:
    case = cluster_case(cloud)
    xr = copy.deepcopy(composite or case.composite)
    for key, value in (spec or {}).items():
        target = xr["spec"]
        *parents, last = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    xr["metadata"]["labels"].update(labels or {})
    fetched = case.fetched()
    if env:
        data = copy.deepcopy(case.environment[0]["data"])
        data.update(env)
        fetched["environment-0"] = [environment_config("cluster-" + cloud, data)]
    step = case.step()
    if module:
        step["module"] = module
    return client.run(case.request(composite=xr, input=step, required=fetched))


def _plain(messages: list[str]) -> None:
    for message in messages:
        assert not any(p in message for p in PYDANTIC_PHRASES), message
        assert not re.search(r"\^.*\$|\[a-z", message), f"a regex in: {message}"


# -- item 9: unknown fields ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "guess"),
    [
        case(
            "a misspelt top-level spec field (pool) warns with the closest field (pools) "
            "and is pruned as the API server would",
            "pool",
            {"extra": {}},
            "pools",
        ),
        case(
            "a misspelt nested parameter warns with its full path and the closest field, "
            "and changes nothing composed",
            "parameters.privatCluster",
            False,
            "privateCluster",
        ),
        case(
            "a misspelt field deep inside a pool's nodeConfig warns with the closest "
            "field, as kubectl's field validation does",
            "pools.pool0.nodeConfig.machinType",
            "n2-standard-4",
            "machineType",
        ),
    ],
)
def test_an_unknown_spec_field_is_a_warning_with_the_closest_field(client, field, value, guess):
    baseline = _run(client)
    rendered = _run(client, spec={field: value})
    assert rendered.fatal == []
    (warning,) = [w for w in rendered.warnings if "unknown field" in w]
    assert warning.startswith(f"spec.{field}: unknown field")
    assert f"did you mean {guess}?" in warning
    # pruned as the API server would: the same resources as without the typo
    assert rendered.resources == baseline.resources
    _plain(rendered.warnings)


def test_an_unknown_field_of_an_async_actor_spec_is_pruned_with_a_warning(client):
    case = async_actor_case()
    xr = copy.deepcopy(case.composite)
    xr["spec"]["scaling"]["maxReplicaCont"] = 3
    rendered = client.run(case.request(composite=xr))
    assert rendered.fatal == []
    assert any(
        w.startswith("spec.scaling.maxReplicaCont: unknown field")
        and "did you mean maxReplicaCount?" in w
        for w in rendered.warnings
    )


@pytest.mark.parametrize(
    ("env", "path", "guess"),
    [
        case(
            "environment fields are the platform team's: a wrong case (subnetCIDR) is "
            "fatal with the closest field, nothing composed on a guess",
            {"network": {"subnetCIDR": "10.1.0.0/20"}},
            "environment.network.subnetCIDR",
            "subnetCidr",
        ),
        case(
            "an unknown monitoring field is fatal naming environment.monitoring.enable "
            "and suggesting enabled",
            {"monitoring": {"enable": False}},
            "environment.monitoring.enable",
            "enabled",
        ),
        case(
            "a misspelt key inside a chart's settings is fatal naming the full path under "
            "the chart",
            {"charts": {"cert-manager": {"versoin": "1.2.3"}}},
            "environment.charts.cert-manager.versoin",
            "version",
        ),
    ],
)
def test_an_unknown_environment_field_is_fatal_with_the_closest_field(client, env, path, guess):
    rendered = _run(client, env=env)
    assert len(rendered.fatal) == 1, rendered.messages
    assert rendered.fatal[0].startswith(f"{path}: unknown field")
    assert f"did you mean {guess}?" in rendered.fatal[0]
    assert rendered.resources == {}
    _plain(rendered.fatal)


def test_an_import_name_that_matches_nothing_is_fatal_with_the_closest_name(client):
    imports = {"enabled": True, "resources": {"netwrk": {"externalName": "vpc-1"}}}
    rendered = _run(client, spec={"parameters.import": imports})
    assert rendered.fatal == [
        "spec.parameters.import.resources.netwrk: no composed resource has this name; "
        "did you mean network?"
    ]


def test_an_import_name_of_a_resource_held_back_for_now_is_accepted(client):
    """Node pools wait for the cluster; importing one must not fail on the first pass."""
    imports = {"enabled": True, "resources": {"pool-pool0": {"externalName": "pool-a"}}}
    rendered = _run(client, spec={"parameters.import": imports})
    assert rendered.fatal == []


@pytest.mark.parametrize("value", ["yes", "false", 1, 0])
def test_booleans_accept_only_booleans(client, value):
    rendered = _run(client, spec={"parameters.privateCluster": value})
    assert rendered.fatal == ["spec.parameters.privateCluster: must be true or false"]


def test_an_environment_boolean_accepts_only_booleans(client):
    rendered = _run(client, env={"monitoring": {"enabled": "no"}})
    assert rendered.fatal == ["environment.monitoring.enabled: must be true or false"]


# -- item 10: CIDRs ------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", ["gcp", "aws", "azure"])
@pytest.mark.parametrize("cidr", ["banana", "10.0.0.0/33", "10.0.0.1/20", "10.0.0.0"])
def test_cidrs_are_checked_the_same_on_every_cloud(client, cloud, cidr):
    rendered = _run(client, cloud, env={"network": {"subnetCidr": cidr}})
    assert len(rendered.fatal) == 1, rendered.messages
    assert rendered.fatal[0].startswith("environment.network.subnetCidr: must ")
    assert "10.0.0.0/20" in rendered.fatal[0]  # says what a valid value looks like
    assert cidr not in rendered.fatal[0].replace("10.0.0.0/20", "")  # never echoes the value


def test_gcp_settings_cidrs_use_the_same_check(client):
    rendered = _run(client, "gcp", env={"gcp": {"masterCidr": "172.16.0.0/33"}})
    assert len(rendered.fatal) == 1 and rendered.fatal[0].startswith(
        "environment.gcp.masterCidr: must be an IP range in CIDR notation"
    )


# -- item 11: plain words --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        case(
            "a domain that is not a lowercase DNS name is refused with the field and an "
            "example of a valid one",
            {"parameters.domain": "Not A Domain"},
            "spec.parameters.domain: must be a lowercase DNS domain such as shop.example.com",
        ),
        case(
            "a v-prefixed Kubernetes version is refused with the field and an example minor",
            {"parameters.kubernetesVersion": "v1.2"},
            "spec.parameters.kubernetesVersion: must be a Kubernetes minor version such as 1.33",
        ),
        case(
            "a string where an object is expected is refused naming spec.parameters in plain words",
            {"parameters": "private"},
            "spec.parameters: must be an object",
        ),
        case(
            "autoscaling bounds the wrong way round are refused naming minNodeCount and "
            "what it must not exceed",
            {"pools.pool0.autoscaling": {"minNodeCount": 5, "maxNodeCount": 2}},
            "spec.pools.pool0.autoscaling.minNodeCount: must not exceed maxNodeCount",
        ),
        case(
            "a pool name that is not a DNS label is refused: it becomes part of cloud "
            "resource names",
            {"pools.Pool_A": {}},
            "spec.pools.Pool_A: a pool name must be a DNS label",
        ),
        case(
            "maxNodeCount 0 is refused: a pool must be able to hold a node",
            {"pools.pool0.autoscaling": {"maxNodeCount": 0}},
            "spec.pools.pool0.autoscaling.maxNodeCount: must be at least 1",
        ),
    ],
)
def test_messages_are_plain_words_with_the_exact_path(client, spec, expected):
    rendered = _run(client, spec=spec)
    assert len(rendered.fatal) == 1, rendered.messages
    assert rendered.fatal[0].startswith(expected), rendered.fatal[0]
    _plain(rendered.fatal)


def test_a_bad_label_suggests_the_closest_value(client):
    rendered = _run(client, labels={"cloud": "gpc"})
    assert rendered.fatal == [
        "metadata.labels.cloud: must be one of aws, azure, gcp; did you mean gcp?"
    ]


@pytest.mark.parametrize("module", ["clustr", "nothing-like-it"])
def test_the_module_list_names_only_modules_of_this_release(client, module):
    from fnplatform.composers import composers

    rendered = _run(client, module=module)
    (message,) = rendered.fatal
    assert message.startswith(f"input.module: '{module}' is not a module of this release")
    assert message.endswith("available: " + ", ".join(sorted(composers())))
    if module == "clustr":
        assert "did you mean cluster?" in message


def test_an_unknown_input_field_suggests_the_closest(client):
    case = cluster_case("gcp")
    step = case.step()
    step["ttll"] = "60s"
    rendered = client.run(case.request(input=step))
    assert rendered.fatal == ["input.ttll: unknown field; did you mean ttl?"]


def test_a_composite_of_another_kind_is_named(client):
    xr = copy.deepcopy(async_actor_case().composite)
    rendered = _run(client, composite=xr)
    (message,) = rendered.fatal
    assert message.startswith("input.module: module cluster composes XCluster")
    assert "kind is XAsyncActor (module async-actor composes XAsyncActor)" in message


def test_every_pattern_of_a_shipped_model_says_what_a_valid_value_looks_like():
    """A pattern without words would reach the user as 'is not in the expected format'."""
    import importlib
    import pkgutil

    import fnplatform
    from fnplatform.api.validation import _PATTERN_WORDS
    from pydantic import BaseModel

    for module in pkgutil.walk_packages(fnplatform.__path__, "fnplatform."):
        importlib.import_module(module.name)
    models, pending = set(), list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        models.add(model)
        pending += model.__subclasses__()
    missing = [
        f"{model.__module__}.{model.__name__}.{name}: {meta.pattern}"
        for model in models
        if model.__module__.startswith("fnplatform.")
        for name, info in model.model_fields.items()
        for meta in info.metadata
        if getattr(meta, "pattern", None) and meta.pattern not in _PATTERN_WORDS
    ]
    assert missing == [], "wrap each pattern in validation.describe_pattern(pattern, words)"


def test_a_flavor_typo_names_the_field_the_closest_one_and_the_flavor(client):
    from tests.test_async_actor import composite, flavor, run

    rendered = run(
        client,
        composite(flavors=["gpu"]),
        flavors={"gpu": [flavor("gpu", {"resources": {"limts": {"cpu": "2"}}})]},
    )
    assert rendered.fatal == [
        "spec.resources.limts: unknown field; did you mean limits? (from flavor gpu)"
    ]


def test_a_flavor_boolean_accepts_only_booleans(client):
    from tests.test_async_actor import composite, flavor, run

    rendered = run(
        client,
        composite(flavors=["gpu"]),
        flavors={"gpu": [flavor("gpu", {"scaling": {"enabled": "yes"}})]},
    )
    assert rendered.fatal == ["spec.scaling.enabled: must be true or false (from flavor gpu)"]


def test_a_step_input_boolean_accepts_only_booleans(client):
    case = cluster_case("gcp")
    step = case.step()
    step["environment"][0]["optional"] = "yes"
    rendered = client.run(case.request(input=step))
    assert rendered.fatal == ["input.environment[0].optional: must be true or false"]


# -- a fatal result reaches the claim ------------------------------------------------------


def test_a_fatal_result_reaches_the_claim_as_an_event_and_a_condition(client):
    """Crossplane records a fatal result on the composite only; what precedes it reaches both.

    The warning and the ``Composed`` condition come before the fatal result, targeted at the
    composite and the claim, with the same message (see ``function.dispatch.fatal``).
    """
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1

    rendered = _run(client, module="clustr")
    (message,) = rendered.fatal
    assert message.startswith("input.module: 'clustr' is not a module of this release")
    first, last = rendered.response.results[0], rendered.response.results[-1]
    assert (first.severity, first.message, first.reason, first.target) == (
        fnv1.SEVERITY_WARNING,
        message,
        "InvalidInput",
        fnv1.TARGET_COMPOSITE_AND_CLAIM,
    )
    assert last.severity == fnv1.SEVERITY_FATAL
    (condition,) = rendered.response.conditions
    assert (
        condition.type,
        condition.status,
        condition.reason,
        condition.message,
        condition.target,
    ) == (
        "Composed",
        fnv1.STATUS_CONDITION_FALSE,
        "InvalidInput",
        message,
        fnv1.TARGET_COMPOSITE_AND_CLAIM,
    )


# -- chart keys of the cluster module (issue 22 item 10) --------------------------------------


def _cluster_with_charts(charts: dict[str, Any]) -> Any:
    import dataclasses

    case = cluster_case("gcp")
    data = copy.deepcopy(case.environment[0]["data"])
    data["charts"] = charts
    return dataclasses.replace(case, environment=(environment_config("cluster-gcp", data),))


def test_the_designs_monitoring_key_disables_the_monitoring_chart(client):
    from tests.support.cases import converge

    enabled, _ = converge(client.run, _cluster_with_charts({}))
    assert "release-kube-prometheus-stack" in enabled.resources
    disabled, _ = converge(client.run, _cluster_with_charts({"monitoring": {"disabled": True}}))
    assert not disabled.fatal and not disabled.warnings
    assert "release-kube-prometheus-stack" not in disabled.resources
    assert "release-cert-manager" in disabled.resources


@pytest.mark.parametrize(
    ("charts", "warning"),
    [
        case(
            "a misspelt chart key is a warning (not fatal): it is ignored, with the "
            "closest chart and the valid ones listed",
            {"ingres-nginx": {"disabled": True}},
            "environment.charts.ingres-nginx: not a chart of this module, ignored; did you mean "
            "ingress-nginx? valid: cert-manager, cluster-autoscaler, ingress-nginx, "
            "kube-prometheus-stack, monitoring",
        ),
        case(
            "a chart this module does not ship is ignored with a warning listing the "
            "valid charts, and no guess when none is close",
            {"grafana": {"disabled": True}},
            "environment.charts.grafana: not a chart of this module, ignored; valid: cert-manager, "
            "cluster-autoscaler, ingress-nginx, kube-prometheus-stack, monitoring",
        ),
    ],
)
def test_an_unknown_chart_key_is_a_warning_naming_it_and_the_valid_ones(client, charts, warning):
    case = _cluster_with_charts(charts)
    rendered = client.run(case.request())
    assert rendered.warnings == [warning]
    _plain(rendered.warnings)


def test_both_names_of_the_monitoring_chart_are_refused(client):
    case = _cluster_with_charts(
        {"monitoring": {"disabled": True}, "kube-prometheus-stack": {"version": "79.0.0"}}
    )
    (message,) = client.run(case.request()).fatal
    assert message.startswith("environment")
    assert (
        "charts.monitoring and charts.kube-prometheus-stack name the same chart; keep one"
        in message
    )
