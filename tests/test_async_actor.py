"""The async-actor module over gRPC: every stage, flavor rule and validation error.

Every composed resource is validated against the real provider CRDs (SQS Queue,
provider-kubernetes Object, Crossplane Usage) and every KEDA manifest inside an Object against
the KEDA CRDs.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import providersim
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.cases import asya_runtime_configmap
from tests.support.controls import SYNCED_FALSE, broken
from tests.support.harness import observed_ready, request, step_input
from tests.support.table import case

NAMESPACE, ACTOR = "team-a", "text-processor"
QUEUE_NAME = f"asya-{NAMESPACE}-{ACTOR}"


def _sqs(name: str) -> dict[str, Any]:
    """What SQS reports for queue ``name`` in eu-west-1 (platform/providersim/simulation.py)."""
    return (
        providersim.reported(
            {
                "apiVersion": "sqs.aws.upbound.io/v1beta1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": {"forProvider": {"region": "eu-west-1", "name": name}},
            }
        )
        or {}
    )


QUEUE_URL, QUEUE_ARN = _sqs(QUEUE_NAME)["url"], _sqs(QUEUE_NAME)["arn"]
DLQ_ARN = _sqs(f"asya-{NAMESPACE}-dlq")["arn"]
SETTINGS: dict[str, Any] = {
    "aws": {"region": "eu-west-1", "accountId": "123456789012", "providerConfig": "aws-main"},
    "irsa": {
        "enabled": True,
        "serviceAccountName": "asya-actors",
        "roleArnPattern": "arn:aws:iam::123456789012:role/asya-{namespace}",
    },
    "kubernetesProviderConfig": "in-cluster",
}
ENV_API = "apiextensions.crossplane.io/v1beta1"


def composite(**spec: Any) -> dict[str, Any]:
    """The seed's text-processor XR, claimed in team-a."""
    body = {"image": "ghcr.io/example/text-processor:1.0.0", "handler": "processor.handle"}
    body.update(spec)
    return {
        "apiVersion": "asya.sh/v1alpha1",
        "kind": "XAsyncActor",
        "metadata": {
            "name": "text-processor-x7k2p",
            "labels": {
                "crossplane.io/claim-name": ACTOR,
                "crossplane.io/claim-namespace": NAMESPACE,
            },
        },
        "spec": body,
    }


def flavor(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """A flavor EnvironmentConfig as Crossplane fetches it."""
    return {
        "apiVersion": ENV_API,
        "kind": "EnvironmentConfig",
        "metadata": {"name": f"flavor-{name}", "labels": {"asya.sh/flavor": name}},
        "data": data,
    }


def run(client, xr, *, settings=None, observed=None, flavors=None, protocol="v1", first_pass=False):
    """Compose ``xr``; ``flavors`` maps flavor name -> fetched configs (None: not fetched).

    Without ``observed``: the pass after the queue became Ready (the Deployment waits for
    it), unless ``first_pass`` asks for the very first pass (nothing observed).
    """
    required = {f"flavor-{n}": items for n, items in (flavors or {}).items() if items is not None}
    required["runtime-configmap"] = [asya_runtime_configmap(NAMESPACE)]

    def send(seen):
        req = request(
            xr,
            step_input("async-actor", settings=settings if settings is not None else SETTINGS),
            observed=seen,
            required=required,
        )
        return client.run(req, protocol=protocol)

    if observed is not None or first_pass:
        return send(observed)
    first = send(None)
    seen: dict[str, Any] = {}
    if "dead-letter-queue" in first.resources:  # the actor's queue waits for it
        seen["dead-letter-queue"] = providersim.ready(first.resource("dead-letter-queue"))
        first = send(seen)
    if "queue" not in first.resources:
        return first
    seen["queue"] = providersim.ready(first.resource("queue"))
    return send(seen)


def manifest(rendered, name: str) -> dict[str, Any]:
    """The manifest inside Object ``name``."""
    return rendered.resource(name)["spec"]["forProvider"]["manifest"]


def container(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    """One container of a Deployment manifest."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == name)


def env_of(c: dict[str, Any]) -> dict[str, Any]:
    """A container's env as name -> value."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def observed_object(body: dict[str, Any], manifest_status: dict[str, Any] | None) -> dict[str, Any]:
    """An Object observed Ready, its managed object reporting ``manifest_status``."""
    live = copy.deepcopy(body["spec"]["forProvider"]["manifest"])
    if manifest_status is not None:
        live["status"] = manifest_status
    return observed_ready(body, atProvider={"manifest": live})


def condition(type_: str, status: str = "True") -> dict[str, Any]:
    """A Kubernetes condition."""
    return {"type": type_, "status": status, "reason": "Test"}


def stage_queue_ready(rendered) -> dict[str, dict[str, Any]]:
    """Observed state once the queue reports its URL; the Objects exist but aren't live yet."""
    observed = {name: observed_ready(body) for name, body in rendered.resources.items()}
    observed["queue"] = providersim.ready(rendered.resource("queue"))
    return observed


def stage_all_ready(rendered, replicas: int) -> dict[str, dict[str, Any]]:
    """Observed state with KEDA Ready and the Deployment Available at ``replicas``."""
    observed = stage_queue_ready(rendered)
    for name, body in rendered.resources.items():
        if body.get("kind") != "Object":
            continue
        kind = body["spec"]["forProvider"]["manifest"]["kind"]
        status = {
            "ScaledObject": {"conditions": [condition("Ready"), condition("Active", "False")]},
            "Deployment": {
                "conditions": [condition("Available")],
                **({"replicas": replicas, "readyReplicas": replicas} if replicas else {}),
            },
        }.get(kind)
        observed[name] = observed_object(body, status)
    return observed


def assert_all_valid(rendered, catalog) -> None:
    """Every composed resource, and every KEDA manifest inside an Object, is schema-valid."""
    errors = []
    for name, body in sorted(rendered.resources.items()):
        errors += [f"{name}: {e}" for e in catalog.validate(body)]
        if body.get("kind") == "Object":
            inner = body["spec"]["forProvider"]["manifest"]
            if inner["apiVersion"].startswith("keda.sh/"):
                errors += [f"{name} manifest: {e}" for e in catalog.validate(inner)]
    assert not errors, "\n".join(errors)


# -- stages -------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["v1", "v1beta1"])
def test_first_pass_composes_the_dead_letter_queue_identity_and_auth_first(
    client, catalog, protocol
):
    rendered = run(client, composite(), protocol=protocol, first_pass=True)
    assert not rendered.fatal, rendered.messages
    assert sorted(rendered.resources) == ["dead-letter-queue", "service-account", "trigger-auth"]
    assert rendered.status["phase"] == "Creating"
    assert rendered.status["actor"] == ACTOR
    assert rendered.status["infrastructure"]["keda"]["message"] == "waiting for the queue URL"
    composed = rendered.condition("Composed")
    assert composed is not None and "scaled-object" in composed.message
    # SQS refuses a redrive policy naming a queue that does not exist
    assert "queue (waits for dead-letter-queue Ready)" in composed.message
    assert "deployment (waits for queue Ready)" in composed.message
    assert_all_valid(rendered, catalog)


def dlq_ready(first) -> dict[str, Any]:
    """Observed: the namespace's dead-letter queue of ``first``, Ready with its ARN."""
    return {"dead-letter-queue": providersim.ready(first.resource("dead-letter-queue"))}


def test_the_namespace_dead_letter_queue_is_shared_created_once_and_never_deleted(client, catalog):
    first = run(client, composite(), first_pass=True)
    dlq = first.resource("dead-letter-queue")
    assert dlq["spec"]["forProvider"]["name"] == f"asya-{NAMESPACE}-dlq"
    assert dlq["spec"]["forProvider"]["messageRetentionSeconds"] == 1209600
    assert "redrivePolicy" not in dlq["spec"]["forProvider"]
    # every actor of the namespace declares it: none updates (tags) or deletes it
    assert dlq["spec"]["managementPolicies"] == ["Observe", "Create"]
    queue = run(client, composite(), observed=dlq_ready(first)).resource("queue")
    redrive = json.loads(queue["spec"]["forProvider"]["redrivePolicy"])
    assert redrive == {"deadLetterTargetArn": DLQ_ARN, "maxReceiveCount": 3}
    assert "managementPolicies" not in queue["spec"]
    assert_all_valid(first, catalog)


@pytest.mark.parametrize(
    "settings",
    [
        case(
            "the dead-letter queue switched off in the settings: no DLQ, and the queue "
            "carries no redrive policy pointing at one",
            {**SETTINGS, "dlq": {"enabled": False}},
        ),
        case(
            "settings without a dlq section: the default is no dead-letter queue, so no "
            "redrive either",
            {**SETTINGS, "aws": {"region": "eu-west-1"}},
        ),
    ],
)
def test_without_a_dead_letter_queue_the_queue_has_no_redrive(client, settings):
    first = run(client, composite(), settings=settings, first_pass=True)
    assert "dead-letter-queue" not in first.resources
    assert "redrivePolicy" not in first.resource("queue")["spec"]["forProvider"]


def test_deployment_waits_for_a_ready_queue_and_is_kept_once_it_exists(client):
    first = run(client, composite(), observed=dlq_ready(run(client, composite(), first_pass=True)))
    creating = {**dlq_ready(first), "queue": observed_ready(first.resource("queue"))}
    creating["queue"]["status"]["conditions"][0]["status"] = "False"
    assert "deployment" not in run(client, composite(), observed=creating).resources
    ready = run(client, composite())
    assert ready.resource("deployment")
    assert ("usage-queue-by-deployment") in ready.resources  # pods stop before the queue goes
    running = {name: observed_ready(body) for name, body in ready.resources.items()}
    running["queue"]["status"]["conditions"][0]["status"] = "False"
    assert "deployment" in run(client, composite(), observed=running).resources


@pytest.mark.parametrize(
    ("timeout", "grace"),
    [
        case(
            "no actor timeout: the default grace (the default timeout plus the margin) "
            "lets a pod finish its message",
            None,
            330,
        ),
        case(
            "a timeout in seconds: the grace is the timeout plus the margin, so a message "
            "in flight finishes before SIGKILL",
            "90s",
            120,
        ),
        case("a Go duration with two units reads as the same 90s", "1m30s", 120),
        case("an hour-long timeout gets an hour plus the margin", "1h", 3630),
        case(
            "a fractional timeout is rounded up: the grace never cuts a message short", "2.5s", 33
        ),
    ],
)
def test_pods_get_the_actor_timeout_plus_a_margin_to_finish_a_message(client, timeout, grace):
    resiliency = {"actorTimeout": timeout} if timeout else None
    xr = composite(**({"resiliency": resiliency} if resiliency else {}))
    pod = manifest(run(client, xr), "deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == grace


def test_queue_is_named_per_namespace_and_actor_with_seed_timings_tags_and_redrive(client):
    queue = run(client, composite()).resource("queue")
    assert queue["apiVersion"] == "sqs.aws.upbound.io/v1beta1"
    for_provider = queue["spec"]["forProvider"]
    assert for_provider["name"] == QUEUE_NAME
    assert for_provider["region"] == "eu-west-1"
    assert for_provider["visibilityTimeoutSeconds"] == 30
    assert for_provider["messageRetentionSeconds"] == 345600
    assert for_provider["receiveWaitTimeSeconds"] == 20
    assert for_provider["tags"]["asya.sh/namespace"] == NAMESPACE
    assert for_provider["tags"]["asya.sh/actor"] == ACTOR
    assert for_provider["redrivePolicy"] == (
        '{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:123456789012:asya-team-a-dlq",'
        '"maxReceiveCount":3}'
    )
    assert queue["spec"]["providerConfigRef"] == {"name": "aws-main"}


def test_no_redrive_policy_without_an_account_id(client, catalog):
    settings = copy.deepcopy(SETTINGS)
    del settings["aws"]["accountId"]
    rendered = run(client, composite(), settings=settings)
    assert "redrivePolicy" not in rendered.resource("queue")["spec"]["forProvider"]
    assert_all_valid(rendered, catalog)


def test_retry_max_attempts_sets_the_redrive_receive_count(client):
    xr = composite(resiliency={"retry": {"maxAttempts": 7}})
    policy = run(client, xr).resource("queue")["spec"]["forProvider"]["redrivePolicy"]
    assert '"maxReceiveCount":7' in policy


QUEUE_TIMINGS = ("visibilityTimeoutSeconds", "messageRetentionSeconds", "receiveWaitTimeSeconds")


def _timings(rendered) -> tuple[int, ...]:
    """The actor queue's visibility timeout, retention and receive wait."""
    for_provider = rendered.resource("queue")["spec"]["forProvider"]
    return tuple(for_provider[key] for key in QUEUE_TIMINGS)


def test_queue_attributes_come_from_the_settings_then_flavors_then_the_claim(client, catalog):
    """The guide's 30 s / 4 days / 20 s unless the platform's settings say otherwise; a flavor
    sets its own, the claim has the last word, attribute by attribute."""
    settings = {
        **SETTINGS,
        "queue": {"visibilityTimeoutSeconds": 60, "messageRetentionSeconds": 86400},
    }
    assert _timings(run(client, composite(), settings=settings)) == (60, 86400, 20)
    slow = flavor(
        "slow",
        {
            "queue": {"visibilityTimeoutSeconds": 900, "receiveWaitTimeSeconds": 10},
            "resiliency": {"retry": {"maxAttempts": 5}},
        },
    )
    rendered = run(client, composite(flavors=["slow"]), settings=settings, flavors={"slow": [slow]})
    assert _timings(rendered) == (900, 86400, 10)
    assert (
        '"maxReceiveCount":5' in rendered.resource("queue")["spec"]["forProvider"]["redrivePolicy"]
    )
    assert_all_valid(rendered, catalog)
    own = composite(flavors=["slow"], queue={"receiveWaitTimeSeconds": 0})
    assert _timings(run(client, own, settings=settings, flavors={"slow": [slow]})) == (
        900,
        86400,
        0,
    )


def test_the_dead_letter_queue_receive_count_comes_from_the_settings(client):
    settings = {**SETTINGS, "dlq": {"maxReceiveCount": 9}}
    policy = run(client, composite(), settings=settings).resource("queue")["spec"]["forProvider"][
        "redrivePolicy"
    ]
    assert '"maxReceiveCount":9' in policy


@pytest.mark.parametrize(
    ("settings", "spec", "flavor_data", "field", "says"),
    [
        case(
            "SQS caps the visibility timeout at 43200s: above it is refused naming the "
            "setting and the limit",
            {"queue": {"visibilityTimeoutSeconds": 43201}},
            {},
            None,
            "environment.queue.visibilityTimeoutSeconds",
            "43200",
        ),
        case(
            "SQS long polling waits at most 20s: above it is refused naming the setting "
            "and the limit",
            {"queue": {"receiveWaitTimeSeconds": 21}},
            {},
            None,
            "environment.queue.receiveWaitTimeSeconds",
            "20",
        ),
        case(
            "SQS keeps messages at least 60s: below it is refused naming the setting and the limit",
            {"queue": {"messageRetentionSeconds": 59}},
            {},
            None,
            "environment.queue.messageRetentionSeconds",
            "60",
        ),
        case(
            "an unknown queue setting is refused naming it, not ignored",
            {"queue": {"pollSeconds": 5}},
            {},
            None,
            "environment.queue.pollSeconds",
            "unknown field",
        ),
        case(
            "SQS redrive allows at most 1000 receives: above it is refused naming the "
            "setting and the limit",
            {"dlq": {"maxReceiveCount": 1001}},
            {},
            None,
            "environment.dlq.maxReceiveCount",
            "1000",
        ),
        case(
            "a negative wait on the claim is refused naming the claim's field and the lower bound",
            {},
            {"queue": {"receiveWaitTimeSeconds": -1}},
            None,
            "spec.queue.receiveWaitTimeSeconds",
            "0",
        ),
        case(
            "a flavor's bad queue value is refused naming the field and the flavor it came from",
            {},
            {},
            {"queue": {"visibilityTimeoutSeconds": "long"}},
            "spec.queue.visibilityTimeoutSeconds",
            "flavor slow",
        ),
        case(
            "a dead-letter queue keeping messages for less time than the queue drops them "
            "unseen: refused naming both retentions",
            {"dlq": {"retentionSeconds": 86400}},
            {},
            None,
            "environment.queue.messageRetentionSeconds",
            "dlq.retentionSeconds: 86400",
        ),
        case(
            "a flavor may raise the retention to SQS's 14-day maximum: accepted",
            {},
            {},
            {"queue": {"messageRetentionSeconds": 1209600}},
            None,
            None,
        ),
        case(
            "a claim retention longer than the dead-letter queue's would expire messages "
            "in the DLQ before they are seen: refused",
            {"dlq": {"retentionSeconds": 345600}},
            {"queue": {"messageRetentionSeconds": 345601}},
            None,
            "spec.queue.messageRetentionSeconds",
            "expire in the dead-letter queue",
        ),
    ],
)
def test_bad_queue_attributes_are_refused_naming_the_field(
    client, settings, spec, *, flavor_data, field, says
):
    merged = {**SETTINGS, **settings}
    flavors = {}
    if flavor_data is not None:
        spec = {**spec, "flavors": ["slow"]}
        flavors = {"slow": [flavor("slow", flavor_data)]}
    rendered = run(client, composite(**spec), settings=merged, flavors=flavors)
    if field is None:
        assert not rendered.fatal, rendered.messages
        return
    assert len(rendered.fatal) == 1, rendered.messages
    assert field in rendered.fatal[0] and says in rendered.fatal[0], rendered.fatal[0]
    assert "Traceback" not in rendered.fatal[0]
    assert rendered.resources == {}


def test_a_queue_name_over_the_sqs_limit_is_refused_not_shortened(client):
    """The Asya sidecar looks up exactly asya-<namespace>-<actor>: a shortened name would be a
    queue nobody consumes, so an actor whose name can't fit is refused on spec.actor."""
    xr = composite(actor="a" * 63)
    xr["metadata"]["labels"]["crossplane.io/claim-namespace"] = "n" * 63
    rendered = run(client, xr)
    assert rendered.fatal
    message = rendered.messages[0]
    assert message.startswith("spec.actor: ")
    assert f"asya-{'n' * 63}-{'a' * 63}" in message and "SQS allows 80" in message
    assert rendered.resources == {}


def test_the_longest_queue_name_sqs_allows_is_kept_exactly(client, catalog):
    namespace, actor = "n" * 11, "a" * 63  # asya-<11>-<63>: 80 characters
    xr = composite(actor=actor)
    xr["metadata"]["labels"]["crossplane.io/claim-namespace"] = namespace
    rendered = run(client, xr)
    assert rendered.resource("queue")["spec"]["forProvider"]["name"] == (
        f"asya-{namespace}-{actor}"
    )
    assert_all_valid(rendered, catalog)


def test_queue_ready_with_url_brings_the_scaled_object(client, catalog):
    first = run(client, composite())
    rendered = run(client, composite(), observed=stage_queue_ready(first))
    assert not rendered.fatal, rendered.messages
    scaled = manifest(rendered, "scaled-object")
    assert scaled["kind"] == "ScaledObject"
    assert scaled["metadata"] == {
        "name": ACTOR,
        "namespace": NAMESPACE,
        "labels": {
            "app.kubernetes.io/component": "scaledobject",
            "app.kubernetes.io/managed-by": "crossplane",
            "app.kubernetes.io/name": ACTOR,
            "app.kubernetes.io/part-of": "asya",
            "asya.sh/actor": ACTOR,
        },
    }
    spec = scaled["spec"]
    assert spec["scaleTargetRef"]["name"] == ACTOR
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (0, 10)
    assert (spec["pollingInterval"], spec["cooldownPeriod"]) == (30, 300)
    trigger = spec["triggers"][0]
    assert trigger["type"] == "aws-sqs-queue"
    assert trigger["metadata"] == {
        "queueURL": QUEUE_URL,
        "queueLength": "5",
        "awsRegion": "eu-west-1",
    }
    assert trigger["authenticationRef"]["name"] == f"{ACTOR}-trigger-auth"
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleUp"]["stabilizationWindowSeconds"] == 0
    assert {
        (p["type"], p["value"], p["periodSeconds"]) for p in behavior["scaleUp"]["policies"]
    } == {("Pods", 10, 60), ("Percent", 100, 60)}
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] == 300
    assert behavior["scaleDown"]["policies"] == [{"type": "Pods", "value": 1, "periodSeconds": 60}]
    sidecar = container(manifest(rendered, "deployment"), "asya-sidecar")
    assert env_of(sidecar)["ASYA_QUEUE_URL"] == QUEUE_URL
    assert rendered.status["queueUrl"] == QUEUE_URL
    assert rendered.status["queueIdentifier"] == QUEUE_ARN
    assert rendered.status["infrastructure"]["queue"]["ready"] is True
    assert rendered.status["phase"] == "Creating"
    assert "usage-trigger-auth-by-scaled-object" in rendered.resources
    assert_all_valid(rendered, catalog)


def test_remembered_queue_url_keeps_the_scaled_object_while_the_queue_is_unobserved(client):
    first = run(client, composite())
    observed = stage_all_ready(first, 0)
    xr = composite()
    xr["status"] = {"queueUrl": QUEUE_URL}
    del observed["queue"]
    rendered = run(client, xr, observed=observed)
    assert "scaled-object" in rendered.resources
    assert rendered.status["queueUrl"] == QUEUE_URL


def test_all_ready_with_five_replicas_is_ready(client, catalog):
    first = run(client, composite())
    second = run(client, composite(), observed=stage_queue_ready(first))
    rendered = run(client, composite(), observed=stage_all_ready(second, 5))
    assert rendered.status["phase"] == "Ready"
    assert rendered.status["infrastructure"] == {
        "queue": {"ready": True, "message": "Available"},
        "keda": {"ready": True, "message": "Ready"},
        "workload": {"ready": True, "replicas": 5, "readyReplicas": 5},
    }
    assert all(rendered.ready(name) for name in rendered.resources)
    assert_all_valid(rendered, catalog)


def test_scaled_to_zero_is_napping(client):
    first = run(client, composite())
    second = run(client, composite(), observed=stage_queue_ready(first))
    rendered = run(client, composite(), observed=stage_all_ready(second, 0))
    assert rendered.status["phase"] == "Napping"
    assert rendered.status["infrastructure"]["workload"]["replicas"] == 0


def test_keda_not_ready_keeps_the_actor_creating_with_the_reason(client):
    first = run(client, composite())
    second = run(client, composite(), observed=stage_queue_ready(first))
    observed = stage_all_ready(second, 2)
    observed["scaled-object"] = observed_object(
        second.resource("scaled-object"),
        {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ScaledObjectCheckFailed",
                    "message": "queue not found",
                }
            ]
        },
    )
    rendered = run(client, composite(), observed=observed)
    assert rendered.status["phase"] == "Creating"
    assert rendered.status["infrastructure"]["keda"] == {
        "ready": False,
        "message": "ScaledObjectCheckFailed: queue not found",
    }


# -- workload ------------------------------------------------------------------------------


def test_deployment_runs_the_runtime_and_sidecar_in_the_claim_namespace(client):
    xr = composite(
        env=[{"name": "MODEL", "value": "small"}],
        resources={"requests": {"cpu": "500m", "memory": "1Gi"}},
        pythonExecutable="/usr/local/bin/python3.12",
        imagePullPolicy="Always",
        sidecar={"env": [{"name": "ASYA_EXTRA", "value": "1"}]},
        resiliency={
            "retry": {"policy": "exponential", "maxAttempts": 5, "jitter": True},
            "actorTimeout": "5m",
        },
        nodeSelector={"pool": "gpu"},
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        volumes=[{"name": "models", "emptyDir": {}}],
        volumeMounts=[{"name": "models", "mountPath": "/models"}],
    )
    deployment = manifest(run(client, xr), "deployment")
    assert deployment["apiVersion"] == "apps/v1"
    assert deployment["metadata"]["namespace"] == NAMESPACE
    assert deployment["metadata"]["labels"]["asya.sh/actor"] == ACTOR
    assert "replicas" not in deployment["spec"]  # KEDA owns it
    pod = deployment["spec"]["template"]["spec"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    assert pod["serviceAccountName"] == "asya-actors"
    assert pod["nodeSelector"] == {"pool": "gpu"}
    assert pod["tolerations"][0]["key"] == "gpu"
    assert [v["name"] for v in pod["volumes"]] == ["socket-dir", "tmp", "asya-runtime", "models"]
    runtime = container(deployment, "asya-runtime")
    assert runtime["command"] == ["/usr/local/bin/python3.12", "/opt/asya/asya_runtime.py"]
    assert runtime["imagePullPolicy"] == "Always"
    assert runtime["resources"] == {"requests": {"cpu": "500m", "memory": "1Gi"}}
    assert env_of(runtime)["ASYA_HANDLER"] == "processor.handle"
    assert env_of(runtime)["MODEL"] == "small"
    assert {"name": "models", "mountPath": "/models"} in runtime["volumeMounts"]
    sidecar = env_of(container(deployment, "asya-sidecar"))
    assert sidecar["ASYA_ACTOR_NAME"] == ACTOR
    assert sidecar["ASYA_NAMESPACE"] == NAMESPACE
    assert sidecar["ASYA_TRANSPORT"] == "sqs"
    assert sidecar["ASYA_AWS_REGION"] == "eu-west-1"
    assert sidecar["ASYA_QUEUE_URL"] == QUEUE_URL  # the Deployment waits for the Ready queue
    assert sidecar["ASYA_RESILIENCY_RETRY_POLICY"] == "exponential"
    assert sidecar["ASYA_RESILIENCY_RETRY_MAX_ATTEMPTS"] == "5"
    assert sidecar["ASYA_RESILIENCY_RETRY_JITTER"] == "true"
    assert sidecar["ASYA_RESILIENCY_ACTOR_TIMEOUT"] == "5m"
    assert sidecar["ASYA_EXTRA"] == "1"


def test_objects_use_the_kubernetes_provider_config_and_watch(client):
    rendered = run(client, composite())
    for name in ("deployment", "trigger-auth", "service-account"):
        body = rendered.resource(name)
        assert body["apiVersion"] == "kubernetes.crossplane.io/v1alpha2"
        assert body["spec"]["providerConfigRef"] == {"name": "in-cluster"}
    for name in ("deployment", "trigger-auth"):
        assert rendered.resource(name)["spec"]["watch"] is True
    assert rendered.resource("deployment")["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"


def test_the_shared_service_account_is_not_watched(client):
    """Every actor of the namespace applies the same ServiceAccount: watched, each Object's
    first apply (a new field manager on it) would re-reconcile every actor's Object, n^2."""
    rendered = run(client, composite())
    body = rendered.resource("service-account")
    assert "watch" not in body["spec"]
    assert manifest(rendered, "service-account")["metadata"]["name"] == "asya-actors"


def test_shared_service_account_carries_the_role_and_survives_actor_deletion(client):
    rendered = run(client, composite())
    account = manifest(rendered, "service-account")
    assert account["metadata"]["name"] == "asya-actors"
    assert account["metadata"]["namespace"] == NAMESPACE
    assert account["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/asya-team-a"
    }
    assert "app.kubernetes.io/name" not in account["metadata"]["labels"]
    assert rendered.resource("service-account")["spec"]["deletionPolicy"] == "Orphan"


def test_scaling_disabled_runs_fixed_replicas_without_keda(client, catalog):
    xr = composite(scaling={"enabled": False}, replicas=3)
    first = run(client, xr)
    assert sorted(first.resources) == [
        "dead-letter-queue",
        "deployment",
        "queue",
        "service-account",
        "usage-queue-by-deployment",
    ]
    assert manifest(first, "deployment")["spec"]["replicas"] == 3
    assert first.status["infrastructure"]["keda"] == {"ready": True, "message": "scaling disabled"}
    rendered = run(client, xr, observed=stage_all_ready(first, 3))
    assert rendered.status["phase"] == "Ready"
    assert_all_valid(rendered, catalog)


def test_irsa_off_has_no_service_account(client):
    settings = copy.deepcopy(SETTINGS)
    del settings["irsa"]
    rendered = run(client, composite(), settings=settings)
    assert "service-account" not in rendered.resources
    pod = manifest(rendered, "deployment")["spec"]["template"]["spec"]
    assert "serviceAccountName" not in pod


def test_keda_secret_auth_uses_secret_refs(client, catalog):
    settings = {**SETTINGS, "keda": {"authProvider": "secret", "secretRef": {"name": "aws-keys"}}}
    rendered = run(client, composite(), settings=settings)
    auth = manifest(rendered, "trigger-auth")["spec"]
    assert auth == {
        "secretTargetRef": [
            {"parameter": "awsAccessKeyID", "name": "aws-keys", "key": "AWS_ACCESS_KEY_ID"},
            {"parameter": "awsSecretAccessKey", "name": "aws-keys", "key": "AWS_SECRET_ACCESS_KEY"},
        ]
    }
    assert_all_valid(rendered, catalog)


def test_pod_identity_auth_by_default(client):
    auth = manifest(run(client, composite()), "trigger-auth")
    assert auth["spec"] == {"podIdentity": {"provider": "aws"}}
    assert auth["metadata"]["name"] == f"{ACTOR}-trigger-auth"


def test_actor_defaults_to_the_claim_name_and_spec_actor_wins(client):
    xr = composite()
    xr["metadata"]["labels"]["crossplane.io/claim-name"] = "from-claim"
    assert manifest(run(client, xr), "deployment")["metadata"]["name"] == "from-claim"
    xr["spec"]["actor"] = "explicit"
    assert manifest(run(client, xr), "deployment")["metadata"]["name"] == "explicit"


def test_same_input_gives_byte_identical_output(client):
    first = run(
        client,
        composite(flavors=["gpu"]),
        flavors={
            "gpu": [
                flavor(
                    "gpu",
                    {"nodeSelector": {"b": "2", "a": "1"}, "env": [{"name": "X", "value": "1"}]},
                )
            ]
        },
    )
    second = run(
        client,
        composite(flavors=["gpu"]),
        flavors={
            "gpu": [
                flavor(
                    "gpu",
                    {"nodeSelector": {"b": "2", "a": "1"}, "env": [{"name": "X", "value": "1"}]},
                )
            ]
        },
    )
    assert first.response.SerializeToString(deterministic=True) == (
        second.response.SerializeToString(deterministic=True)
    )


# -- flavors -------------------------------------------------------------------------------


def test_flavors_not_fetched_yet_declares_every_flavor_and_composes_nothing(client):
    rendered = run(client, composite(flavors=["gpu", "large"]), flavors={"gpu": None})
    assert not rendered.fatal
    assert rendered.resources == {}
    assert rendered.requirements["flavor-gpu"]["matchLabels"]["labels"] == {"asya.sh/flavor": "gpu"}
    assert rendered.requirements["flavor-large"]["matchLabels"]["labels"] == {
        "asya.sh/flavor": "large"
    }


def test_flavors_merge_lists_append_maps_merge_and_the_claim_wins(client):
    gpu = flavor(
        "gpu",
        {
            "nodeSelector": {"accelerator": "nvidia"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "env": [{"name": "CUDA", "value": "1"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "scaling": {"maxReplicaCount": 4},
        },
    )
    large = flavor(
        "large",
        {
            "nodeSelector": {"size": "large"},
            "tolerations": [{"key": "large", "operator": "Exists"}],
            "env": [{"name": "THREADS", "value": "8"}],
            "resources": {"requests": {"memory": "8Gi"}},
            "scaling": {"queueLength": 2},
            "pythonExecutable": "python3.12",
        },
    )
    xr = composite(
        flavors=["gpu", "large"],
        env=[{"name": "THREADS", "value": "16"}, {"name": "MODE", "value": "claim"}],
        scaling={"maxReplicaCount": 6},
    )
    first = run(client, xr, flavors={"gpu": [gpu], "large": [large]})
    assert not first.fatal, first.messages
    deployment = manifest(first, "deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"accelerator": "nvidia", "size": "large"}
    assert [t["key"] for t in pod["tolerations"]] == ["gpu", "large"]
    runtime = container(deployment, "asya-runtime")
    assert runtime["resources"] == {
        "requests": {"memory": "8Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    assert runtime["command"][0] == "python3.12"
    env = [(e["name"], e.get("value")) for e in runtime["env"]]
    assert env[2:] == [("CUDA", "1"), ("THREADS", "16"), ("MODE", "claim")]
    rendered = run(
        client, xr, observed=stage_queue_ready(first), flavors={"gpu": [gpu], "large": [large]}
    )
    scaling = manifest(rendered, "scaled-object")["spec"]
    assert scaling["maxReplicaCount"] == 6  # the claim's own value wins over gpu's 4
    assert scaling["triggers"][0]["metadata"]["queueLength"] == "2"


def test_two_flavors_setting_the_same_leaf_is_an_error_naming_both(client):
    rendered = run(
        client,
        composite(flavors=["gpu", "large"]),
        flavors={
            "gpu": [flavor("gpu", {"scaling": {"maxReplicaCount": 4}})],
            "large": [flavor("large", {"scaling": {"maxReplicaCount": 20}})],
        },
    )
    assert len(rendered.fatal) == 1
    message = rendered.fatal[0]
    assert "spec.scaling.maxReplicaCount" in message
    assert "flavor gpu" in message and "flavor large" in message


def test_two_flavors_giving_the_same_env_var_is_an_error(client):
    rendered = run(
        client,
        composite(flavors=["a", "b"]),
        flavors={
            "a": [flavor("a", {"env": [{"name": "X", "value": "1"}]})],
            "b": [flavor("b", {"env": [{"name": "X", "value": "2"}]})],
        },
    )
    assert "spec.env[name=X]" in rendered.fatal[0]
    assert "flavor a" in rendered.fatal[0] and "flavor b" in rendered.fatal[0]


@pytest.mark.parametrize("field", ["actor", "flavors"])
def test_a_flavor_may_not_set_actor_or_flavors(client, field):
    value: Any = "other" if field == "actor" else ["x"]
    rendered = run(
        client, composite(flavors=["gpu"]), flavors={"gpu": [flavor("gpu", {field: value})]}
    )
    assert len(rendered.fatal) == 1
    assert field in rendered.fatal[0] and "flavor gpu" in rendered.fatal[0]


def test_a_missing_flavor_is_an_error_naming_it(client):
    rendered = run(client, composite(flavors=["gpu"]), flavors={"gpu": []})
    assert rendered.fatal == [
        "spec.flavors[0]: no EnvironmentConfig labelled asya.sh/flavor=gpu exists"
    ]


def test_an_invalid_value_from_a_flavor_names_the_flavor(client):
    rendered = run(
        client,
        composite(flavors=["gpu"]),
        flavors={"gpu": [flavor("gpu", {"scaling": {"colour": "blue"}})]},
    )
    assert "spec.scaling.colour" in rendered.fatal[0]
    assert "flavor gpu" in rendered.fatal[0]


def test_two_configs_for_one_flavor_is_an_error(client):
    rendered = run(
        client,
        composite(flavors=["gpu"]),
        flavors={
            "gpu": [flavor("gpu", {}), {**flavor("gpu", {}), "metadata": {"name": "gpu-copy"}}]
        },
    )
    assert "spec.flavors[0]" in rendered.fatal[0] and "gpu-copy" in rendered.fatal[0]


# -- the stateful rule ---------------------------------------------------------------------


def _existing_actor(client) -> dict[str, dict[str, Any]]:
    first = run(client, composite())
    return stage_all_ready(run(client, composite(), observed=stage_queue_ready(first)), 1)


@pytest.mark.parametrize(
    ("spec", "flavors", "field"),
    [
        case(
            "a flavor gone from the cluster on an existing actor is a fatal result: "
            "Crossplane keeps the previous desired state, the queue is not dropped",
            {"flavors": ["gone"]},
            {"gone": []},
            "spec.flavors[0]",
        ),
        case(
            "a handler that is no dotted path on an existing actor: fatal, the queue stays",
            {"handler": "no-dots"},
            {},
            "spec.handler",
        ),
        case(
            "an empty image on an existing actor: fatal, the queue stays",
            {"image": ""},
            {},
            "spec.image",
        ),
    ],
    ids=["missing-flavor", "bad-handler", "empty-image"],
)
def test_a_broken_spec_on_an_existing_actor_never_drops_its_queue(client, spec, flavors, field):
    observed = _existing_actor(client)
    rendered = run(client, composite(**spec), observed=observed, flavors=flavors)
    # A fatal result: Crossplane keeps the previous desired state, queue included.
    assert len(rendered.fatal) == 1 and field in rendered.fatal[0]
    assert "queue" not in rendered.resources  # nothing new is desired, nothing is deleted


# -- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        case(
            "a handler without a module is refused naming spec.handler: the runtime "
            "imports module.function",
            {"handler": "handle"},
            "spec.handler",
        ),
        case(
            "a handler deep in a package (module, class, method) is accepted",
            {"handler": "pkg.mod.Class.method"},
            None,
        ),
        case("an empty image is refused naming spec.image", {"image": ""}, "spec.image"),
        case(
            "an actor name that is no DNS label is refused: it names the queue and the Deployment",
            {"actor": "Bad_Name"},
            "spec.actor",
        ),
        case(
            "an actor name longer than a DNS label (63) is refused",
            {"actor": "a" * 64},
            "spec.actor",
        ),
        case(
            "zero replicas is refused naming spec.replicas, never a Deployment that runs nothing",
            {"replicas": 0},
            "spec.replicas",
        ),
        case(
            "an imagePullPolicy Kubernetes does not know is refused",
            {"imagePullPolicy": "Sometimes"},
            "spec.imagePullPolicy",
        ),
        case(
            "a python executable with a space cannot be exec'd: refused",
            {"pythonExecutable": "python 3"},
            "spec.pythonExecutable",
        ),
        case(
            "more flavors than a claim may combine (8) is refused",
            {"flavors": [f"f{i}" for i in range(9)]},
            "spec.flavors",
        ),
        case(
            "a flavor name that is no label value is refused",
            {"flavors": ["Not A Label"]},
            "spec.flavors",
        ),
        case(
            "min replicas above max is refused naming spec.scaling",
            {"scaling": {"minReplicaCount": 5, "maxReplicaCount": 2}},
            "spec.scaling",
        ),
        case(
            "a queue length of zero would scale on nothing: refused naming "
            "spec.scaling.queueLength",
            {"scaling": {"queueLength": 0}},
            "spec.scaling.queueLength",
        ),
        case(
            "a CPU limit that is no quantity is refused naming its key",
            {"resources": {"limits": {"cpu": "lots"}}},
            "spec.resources.limits.cpu",
        ),
        case(
            "an env var with both value and valueFrom is refused, as Kubernetes refuses it",
            {"env": [{"name": "X", "value": "1", "valueFrom": {"secretKeyRef": {}}}]},
            "spec.env[0]",
        ),
        case(
            "an actor timeout that is no duration is refused naming spec.resiliency.actorTimeout",
            {"resiliency": {"actorTimeout": "forever"}},
            "spec.resiliency.actorTimeout",
        ),
        case(
            "an unknown retry policy is refused naming spec.resiliency.retry.policy",
            {"resiliency": {"retry": {"policy": "random"}}},
            "spec.resiliency.retry.policy",
        ),
        case(
            "a volume without a name is refused naming spec.volumes",
            {"volumes": [{"emptyDir": {}}]},
            "spec.volumes",
        ),
    ],
)
def test_spec_validation_names_the_field(client, spec, field):
    xr = composite(**spec)
    if "image" in spec:
        xr["spec"]["image"] = spec["image"]
    rendered = run(client, xr, flavors={n: [flavor(n, {})] for n in spec.get("flavors", [])})
    if field is None:
        assert not rendered.fatal, rendered.messages
        return
    assert len(rendered.fatal) == 1, rendered.messages
    assert field in rendered.fatal[0]
    assert "Traceback" not in rendered.fatal[0]


QUANTITY_WORDS = "must be a Kubernetes quantity such as 500m, 2 or 4Gi"
NOT_A_QUANTITY_TYPE = "must be a string or a whole number"


@pytest.mark.parametrize(
    ("spec", "flavors", "message", "reason"),
    [
        case(
            "the message names the key holding the bad amount, not the map around it",
            {"resources": {"requests": {"cpu": "lots"}}},
            {},
            f"spec.resources.requests.cpu: {QUANTITY_WORDS}",
            "the message names the key holding the bad amount, not the map around it",
        ),
        case(
            "a space is not part of a quantity",
            {"resources": {"limits": {"memory": "1 Gi"}}},
            {},
            f"spec.resources.limits.memory: {QUANTITY_WORDS}",
            "a space is not part of a quantity",
        ),
        case(
            "a YAML float is neither form a Pod takes here (write 500m): one reason for "
            "both members of the union, at the key, not at .str and .int",
            {"resources": {"requests": {"cpu": 0.5}}},
            {},
            f"spec.resources.requests.cpu: {NOT_A_QUANTITY_TYPE}",
            "a YAML float is neither form a Pod takes here (write 500m): one reason for both "
            "members of the union, at the key, not at .str and .int",
        ),
        case(
            "a boolean is no amount (lax parsing would have read it as 1)",
            {"resources": {"requests": {"cpu": True}}},
            {},
            f"spec.resources.requests.cpu: {NOT_A_QUANTITY_TYPE}",
            "a boolean is no amount (lax parsing would have read it as 1)",
        ),
        case(
            "a list is no amount",
            {"resources": {"requests": {"cpu": [1]}}},
            {},
            f"spec.resources.requests.cpu: {NOT_A_QUANTITY_TYPE}",
            "a list is no amount",
        ),
        case(
            "the sidecar's amounts are checked the same way, at the same depth",
            {"sidecar": {"resources": {"limits": {"cpu": "lots"}}}},
            {},
            f"spec.sidecar.resources.limits.cpu: {QUANTITY_WORDS}",
            "the sidecar's amounts are checked the same way, at the same depth",
        ),
        case(
            "a flavor's bad amount is named at its key, and the flavor that set it",
            {"flavors": ["big"]},
            {"big": [flavor("big", {"resources": {"limits": {"cpu": "lots"}}})]},
            f"spec.resources.limits.cpu: {QUANTITY_WORDS} (from flavor big)",
            "a flavor's bad amount is named at its key, and the flavor that set it",
        ),
    ],
)
def test_a_bad_resource_amount_names_its_key(client, spec, flavors, message, reason):
    rendered = run(client, composite(**spec), flavors=flavors)
    assert rendered.fatal == [message], (reason, rendered.fatal)


def test_resource_amounts_in_either_form_pass(client):
    rendered = run(
        client,
        composite(
            resources={
                "requests": {"cpu": 2, "memory": "512Mi"},
                "limits": {"cpu": "1500m", "memory": "1Gi"},
            }
        ),
    )
    assert not rendered.fatal, rendered.fatal
    runtime = manifest(rendered, "deployment")["spec"]["template"]["spec"]["containers"]
    assert {
        "requests": {"cpu": 2, "memory": "512Mi"},
        "limits": {"cpu": "1500m", "memory": "1Gi"},
    } in [c.get("resources") for c in runtime]


def test_missing_required_spec_fields_are_named(client):
    xr = composite()
    del xr["spec"]["image"], xr["spec"]["handler"]
    message = run(client, xr).fatal[0]
    assert "spec.image" in message and "spec.handler" in message


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        case(
            "no aws section: the queue has no region, refused naming environment.aws",
            {},
            "environment.aws",
        ),
        case(
            "a region AWS does not have is refused naming environment.aws.region",
            {"aws": {"region": "Mars"}},
            "environment.aws.region",
        ),
        case(
            "an account id that is not 12 digits is refused naming environment.aws.accountId",
            {"aws": {"region": "eu-west-1", "accountId": "12"}},
            "environment.aws.accountId",
        ),
        case(
            "IRSA without its service account name is refused naming environment.irsa",
            {"aws": {"region": "eu-west-1"}, "irsa": {"enabled": True}},
            "environment.irsa",
        ),
        case(
            "KEDA with secret auth but no secretRef is refused naming environment.keda",
            {"aws": {"region": "eu-west-1"}, "keda": {"authProvider": "secret"}},
            "environment.keda",
        ),
        case(
            "a transport the function does not compose (only SQS) is refused naming "
            "environment.transport",
            {"aws": {"region": "eu-west-1"}, "transport": "rabbitmq"},
            "environment.transport",
        ),
    ],
)
def test_settings_validation_names_the_field(client, settings, field):
    rendered = run(client, composite(), settings=settings)
    assert len(rendered.fatal) == 1 and field in rendered.fatal[0], rendered.messages


def test_settings_come_from_environment_configs_over_step_settings(client):
    env = {
        "apiVersion": ENV_API,
        "kind": "EnvironmentConfig",
        "metadata": {"name": "asya"},
        "data": {"aws": {"region": "us-east-2"}},
    }
    req = request(
        composite(),
        step_input(
            "async-actor", settings={"aws": {"region": "eu-west-1"}}, environment=[{"name": "asya"}]
        ),
        required={"environment-0": [env]},
    )
    rendered = client.run(req)
    assert rendered.resource("queue")["spec"]["forProvider"]["region"] == "us-east-2"


def test_an_unclaimed_composite_needs_a_namespace(client):
    xr = composite()
    xr["metadata"]["labels"] = {}
    message = run(client, xr).fatal[0]
    assert "crossplane.io/claim-namespace" in message


# -- API -----------------------------------------------------------------------------------


def test_xrd_names_columns_and_no_defaults():
    from fnplatform.composers.async_actor.api import API

    xrd = API.to_xrd()
    assert xrd["metadata"]["name"] == "xasyncactors.asya.sh"
    assert xrd["spec"]["claimNames"] == {
        "kind": "AsyncActor",
        "plural": "asyncactors",
        "shortNames": ["asya", "asyas"],
    }
    version = xrd["spec"]["versions"][0]
    columns = {c["name"]: c for c in version["additionalPrinterColumns"]}
    # the guide's columns; Age is the one Crossplane appends to every composite/claim CRD
    assert list(columns) == ["Actor", "Status", "Ready", "Replicas", "Queue"]
    assert columns["Ready"] == {
        "name": "Ready",
        "type": "integer",
        "jsonPath": ".status.infrastructure.workload.readyReplicas",
    }
    assert columns["Replicas"]["jsonPath"] == ".status.infrastructure.workload.replicas"
    assert columns["Queue"]["priority"] == 1
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert not _keys_named(spec, "default")
    # required as CEL presence rules, which stand aside for the v1 `spec.parameters` shape
    # (fnplatform.api.xrd: the API server skips CEL while OpenAPI `required` fails)
    assert "required" not in spec
    presence = sorted(
        r["fieldPath"][1:]
        for r in spec["x-kubernetes-validations"]
        if r["rule"].startswith("has(self.parameters) || has(self.")
    )
    assert presence == ["handler", "image"]
    assert spec["properties"]["actor"]["pattern"] == "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"


def _keys_named(node: Any, key: str) -> list[Any]:
    """Every value under a dict key ``key`` anywhere in ``node``."""
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k == key]
        return found + [x for v in node.values() for x in _keys_named(v, key)]
    if isinstance(node, list):
        return [x for v in node for x in _keys_named(v, key)]
    return []


# -- review: what Kubernetes, SQS or KEDA would reject later, caught on the claim ------------


def test_renaming_an_existing_actor_is_refused_instead_of_orphaning_its_objects(client):
    # provider-kubernetes looks objects up by the manifest's name: a new name creates a second
    # Deployment and ScaledObject and leaves the old ones running on the old queue.
    observed = _existing_actor(client)
    xr = composite(actor="renamed")
    xr["status"] = {"actor": ACTOR}
    rendered = run(client, xr, observed=observed)
    assert len(rendered.fatal) == 1 and "spec.actor" in rendered.fatal[0], rendered.messages
    assert ACTOR in rendered.fatal[0] and "renamed" in rendered.fatal[0]
    assert not rendered.resources


def test_the_same_actor_name_again_is_fine(client):
    xr = composite()
    xr["status"] = {"actor": ACTOR}
    assert not run(client, xr).fatal


def test_an_actor_named_like_the_namespace_dead_letter_queue_is_refused(client):
    # asya-<namespace>-dlq is the namespace's DLQ: this actor would own (and on deletion
    # delete) the queue every other actor's failed messages go to.
    rendered = run(client, composite(actor="dlq"))
    assert len(rendered.fatal) == 1 and "spec.actor" in rendered.fatal[0], rendered.messages
    assert "asya-team-a-dlq" in rendered.fatal[0]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        case(
            "a volume named like one the function adds (tmp) would clash in the pod: "
            "refused naming the volume",
            {"volumes": [{"name": "tmp", "emptyDir": {}}]},
            "spec.volumes[0].name",
        ),
        case(
            "two volumes with the same name are refused naming the second, as the API "
            "server would reject the pod",
            {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]},
            "spec.volumes[1].name",
        ),
        case(
            "a mount of a volume that does not exist is refused naming the mount",
            {"volumeMounts": [{"name": "models", "mountPath": "/models"}]},
            "spec.volumeMounts[0]",
        ),
        case(
            "a mount without a mountPath is refused naming it",
            {
                "volumes": [{"name": "models", "emptyDir": {}}],
                "volumeMounts": [{"name": "models"}],
            },
            "spec.volumeMounts[0].mountPath",
        ),
        case(
            "a mount over the sidecar's socket directory would break the runtime: refused "
            "naming the mountPath",
            {
                "volumes": [{"name": "models", "emptyDir": {}}],
                "volumeMounts": [{"name": "models", "mountPath": "/var/run/asya"}],
            },
            "spec.volumeMounts[0].mountPath",
        ),
        case(
            "two mounts at the same path (trailing slash aside) are refused naming the second",
            {
                "volumes": [{"name": "models", "emptyDir": {}}],
                "volumeMounts": [
                    {"name": "models", "mountPath": "/models"},
                    {"name": "models", "mountPath": "/models/"},
                ],
            },
            "spec.volumeMounts[1].mountPath",
        ),
    ],
    ids=[
        "reserved-volume",
        "duplicate-volume",
        "unknown-volume",
        "no-path",
        "reserved-path",
        "duplicate-path",
    ],
)
def test_pod_storage_kubernetes_would_reject_is_an_error_on_the_claim(client, spec, field):
    rendered = run(client, composite(**spec))
    assert len(rendered.fatal) == 1, rendered.messages
    assert field in rendered.fatal[0], rendered.fatal[0]


def test_user_volumes_and_mounts_reach_the_runtime_container(client, catalog):
    spec = {
        "volumes": [{"name": "models", "emptyDir": {}}],
        "volumeMounts": [{"name": "models", "mountPath": "/models", "readOnly": True}],
    }
    rendered = run(client, composite(**spec))
    assert not rendered.fatal, rendered.messages
    deployment = manifest(rendered, "deployment")
    volumes = [v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]]
    assert volumes == ["socket-dir", "tmp", "asya-runtime", "models"]
    mounts = container(deployment, "asya-runtime")["volumeMounts"]
    assert mounts[-1] == {"name": "models", "mountPath": "/models", "readOnly": True}


def test_keda_can_assume_the_actors_irsa_role(client, catalog):
    # identityOwner workload: KEDA reads the queue with the role annotated on the pods'
    # service account (the namespace's IRSA role), not with KEDA's own identity.
    settings = {**SETTINGS, "keda": {"identityOwner": "workload"}}
    rendered = run(client, composite(), settings=settings)
    assert manifest(rendered, "trigger-auth")["spec"] == {
        "podIdentity": {"provider": "aws", "identityOwner": "workload"}
    }
    assert_all_valid(rendered, catalog)


@pytest.mark.parametrize(
    "keda",
    [
        case(
            "identityOwner workload reads the queue with the pods' IRSA role: with secret "
            "auth it is refused naming environment.keda",
            {"identityOwner": "workload", "authProvider": "secret", "secretRef": {"name": "k"}},
        ),
        case(
            "identityOwner workload without IRSA has no role to use: refused naming "
            "environment.keda",
            {},
        ),
    ],
    ids=["with-secret", "without-irsa"],
)
def test_workload_identity_needs_pod_identity_and_irsa(client, keda):
    settings = {"aws": SETTINGS["aws"], "keda": {"identityOwner": "workload", **keda}}
    rendered = run(client, composite(), settings=settings)
    assert len(rendered.fatal) == 1 and "environment.keda" in rendered.fatal[0], rendered.messages


# -- the runtime script ConfigMap (issue 22 item 6) -----------------------------------------


def _with_runtime(client, runtime: list[dict[str, Any]] | None, observed=None):
    """The pass after the queue is Ready, with ``runtime`` as the fetched ConfigMap(s)."""
    ready = run(client, composite())
    seen = (
        observed
        if observed is not None
        else {
            name: providersim.ready(body)
            for name, body in ready.resources.items()
            if body["kind"] == "Queue"
        }
    )
    required = {} if runtime is None else {"runtime-configmap": runtime}
    req = request(
        composite(), step_input("async-actor", settings=SETTINGS), observed=seen, required=required
    )
    return client.run(req)


@pytest.mark.parametrize(
    ("runtime", "waits_for"),
    [
        case(
            "no runtime ConfigMap yet: the Deployment waits for it, and the Composed "
            "condition names the ConfigMap and the script it must hold",
            [],
            "ConfigMap asya-runtime in namespace team-a holding the Asya runtime script "
            "asya_runtime.py",
        ),
        case(
            "a ConfigMap without the script key: the Deployment waits naming the missing key",
            [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "asya-runtime", "namespace": NAMESPACE},
                    "data": {"runtime.py": "x"},
                }
            ],
            "key asya_runtime.py in ConfigMap asya-runtime in namespace team-a",
        ),
    ],
    ids=["missing", "wrong-key"],
)
def test_the_deployment_waits_for_the_runtime_script_configmap(client, runtime, waits_for):
    rendered = _with_runtime(client, runtime)
    assert "deployment" not in rendered.resources
    assert "queue" in rendered.resources  # the rest goes on
    composed = rendered.condition("Composed")
    assert composed is not None and f"deployment (waits for {waits_for}" in composed.message
    assert rendered.status["phase"] == "Creating"
    selector = rendered.response.requirements.resources["runtime-configmap"]
    assert (selector.api_version, selector.kind, selector.match_name, selector.namespace) == (
        "v1",
        "ConfigMap",
        "asya-runtime",
        NAMESPACE,
    )


def test_the_actor_is_not_ready_while_its_deployment_is_held(client):
    """Every composed resource Ready but the Deployment never created: Crossplane would call
    the composite Ready from the resources it was given, so the function says it is not."""
    everything_ready: dict[str, Any] = {}
    while True:  # until every resource composed without the ConfigMap is observed Ready
        held = _with_runtime(client, [], observed=everything_ready)
        if set(held.resources) == set(everything_ready):
            break
        everything_ready = {name: providersim.ready(body) for name, body in held.resources.items()}
    assert "deployment" not in held.resources
    assert all(r.ready == fnv1.READY_TRUE for r in held.response.desired.resources.values())
    assert held.response.desired.composite.ready == fnv1.READY_FALSE
    # with the ConfigMap there, the function leaves readiness to Crossplane again
    released = _with_runtime(client, [asya_runtime_configmap(NAMESPACE)], observed=everything_ready)
    assert "deployment" in released.resources
    assert released.response.desired.composite.ready == fnv1.READY_UNSPECIFIED


def test_a_running_deployment_is_kept_when_the_configmap_goes(client):
    ready = run(client, composite())
    running = {name: providersim.ready(body) for name, body in ready.resources.items()}
    assert "deployment" in _with_runtime(client, [], observed=running).resources


def test_the_runtime_configmap_name_and_key_follow_the_settings(client):
    settings = {**SETTINGS, "runtime": {"configMap": "asya-rt", "scriptPath": "/opt/rt/run.py"}}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "asya-rt", "namespace": NAMESPACE},
        "binaryData": {"run.py": "eA=="},
    }
    first = request(
        composite(),
        step_input("async-actor", settings=settings),
        required={"runtime-configmap": [configmap]},
    )
    rendered = client.run(first)
    assert rendered.response.requirements.resources["runtime-configmap"].match_name == "asya-rt"
    seen = {name: providersim.ready(body) for name, body in rendered.resources.items()}
    second = client.run(
        request(
            composite(),
            step_input("async-actor", settings=settings),
            observed=seen,
            required={"runtime-configmap": [configmap]},
        )
    )
    seen.update({name: providersim.ready(body) for name, body in second.resources.items()})
    third = client.run(
        request(
            composite(),
            step_input("async-actor", settings=settings),
            observed=seen,
            required={"runtime-configmap": [configmap]},
        )
    )
    pod = manifest(third, "deployment")["spec"]["template"]["spec"]
    volume = next(v for v in pod["volumes"] if v["name"] == "asya-runtime")
    assert volume["configMap"]["name"] == "asya-rt"


# -- IRSA role ARNs (issue 22 item 8) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("irsa", "arn"),
    [
        case(
            "the role ARN pattern is filled in with the account id and the namespace",
            {"roleArnPattern": "arn:aws:iam::{accountId}:role/asya-{namespace}"},
            "arn:aws:iam::123456789012:role/asya-team-a",
        ),
        case(
            "a fixed role ARN is annotated as written",
            {"roleArn": "arn:aws:iam::210987654321:role/asya-actors"},
            "arn:aws:iam::210987654321:role/asya-actors",
        ),
        case(
            "a pattern in another AWS partition (aws-cn) keeps its partition",
            {"roleArnPattern": "arn:aws-cn:iam::123456789012:role/{namespace}/actors"},
            "arn:aws-cn:iam::123456789012:role/team-a/actors",
        ),
    ],
)
def test_the_service_account_role_arn(client, irsa, arn):
    settings = {**SETTINGS, "irsa": {"enabled": True, "serviceAccountName": "asya-actors", **irsa}}
    rendered = run(client, composite(), settings=settings, first_pass=True)
    annotations = manifest(rendered, "service-account")["metadata"]["annotations"]
    assert annotations["eks.amazonaws.com/role-arn"] == arn


@pytest.mark.parametrize(
    ("irsa", "aws", "message"),
    [
        case(
            "an account placeholder written out instead of {accountId} is refused: "
            "ACCOUNT_ID is no 12-digit account",
            {"roleArnPattern": "arn:aws:iam::ACCOUNT_ID:role/asya-{namespace}"},
            None,
            "environment.irsa.roleArnPattern: 'arn:aws:iam::ACCOUNT_ID:role/asya-{namespace}' "
            "is not a role ARN: the account 'ACCOUNT_ID' is not a 12-digit AWS account id; "
            "write {accountId} to use aws.accountId",
        ),
        case(
            "an unknown placeholder is refused, listing the placeholders the function fills in",
            {"roleArnPattern": "arn:aws:iam::{account}:role/asya-{namespace}"},
            None,
            "environment.irsa.roleArnPattern: unknown placeholder {account}; the function fills in "
            "{namespace}, {accountId}",
        ),
        case(
            "{accountId} without aws.accountId cannot be filled: refused naming both",
            {"roleArnPattern": "arn:aws:iam::{accountId}:role/asya"},
            {"region": "eu-west-1"},
            "environment.irsa.roleArnPattern: uses {accountId}, but aws.accountId is not set",
        ),
        case(
            "a role ARN that is no IAM role ARN is refused with an example",
            {"roleArn": "arn:aws:iam::1:role/x", "roleArnPattern": None},
            None,
            "environment.irsa.roleArn: must be an IAM role ARN such as "
            "arn:aws:iam::123456789012:role/asya-actors",
        ),
    ],
)
def test_a_role_arn_that_cannot_be_assumed_is_refused(client, irsa, aws, message):
    settings = {**SETTINGS, "irsa": {"enabled": True, **irsa}}
    settings["irsa"] = {k: v for k, v in settings["irsa"].items() if v is not None}
    if aws is not None:
        settings["aws"] = aws
    rendered = run(client, composite(), settings=settings, first_pass=True)
    assert rendered.fatal == [message]


@pytest.mark.parametrize(
    ("resource", "part", "why"),
    [
        case(
            "AWS refuses a queue setting: the queue keeps the old one, so the queue part "
            "is not ready and the actor is Creating",
            "queue",
            "queue",
            "AWS refuses a queue setting: the queue keeps the old one",
        ),
        case(
            "the API server rejects the ScaledObject: KEDA scales by the old one, so the "
            "keda part is not ready",
            "scaled-object",
            "keda",
            "the API server rejects the ScaledObject: KEDA scales by the old",
        ),
        case(
            "the API server rejects the Deployment: the old pods run on, so the workload "
            "part is not ready",
            "deployment",
            "workload",
            "the API server rejects the Deployment: the old pods run on",
        ),
    ],
)
def test_a_part_its_provider_cannot_apply_is_not_ready(client, resource, part, why):
    """Ready parts vouch for what the actor runs: a part whose Object or queue reports
    Synced=False (whatever it reported before) is not ready, and the actor is Creating."""
    first = run(client, composite())
    second = run(client, composite(), observed=stage_queue_ready(first))
    observed = broken(stage_all_ready(second, 5), resource, SYNCED_FALSE)
    rendered = run(client, composite(), observed=observed)
    infrastructure = rendered.status["infrastructure"]
    assert infrastructure[part]["ready"] is False, (why, infrastructure)
    if part != "workload":  # the workload reports replicas, no message
        assert infrastructure[part]["message"].startswith("Synced=False: ReconcileError"), (
            why,
            infrastructure,
        )
    assert rendered.status["phase"] == "Creating", why
    assert all(entry["ready"] for name, entry in infrastructure.items() if name != part), why
