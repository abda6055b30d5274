"""The ``async-actor`` module: a queue-driven actor on SQS, autoscaled by KEDA.

Composes the SQS queue (with a redrive policy to the namespace's dead-letter queue, which it
composes too, shared), the
namespace's IRSA service account, KEDA's TriggerAuthentication and ScaledObject (once the queue
reports its URL), and the Deployment running the handler beside the Asya sidecar. Everything
Kubernetes-side goes through provider-kubernetes Objects into the claim's namespace.
Cluster-wide settings come from the step input and EnvironmentConfigs; flavors (labelled
EnvironmentConfigs) fill in the spec under the claim's own values.
"""

from __future__ import annotations

from fnplatform.api.validation import parse
from fnplatform.composers.async_actor import manifests
from fnplatform.composers.async_actor.checks import (
    DLQ_SUFFIX,
    check_actor_name,
    check_pod_storage,
    check_queue_attributes,
    check_settings,
)
from fnplatform.composers.async_actor.manifests import Actor
from fnplatform.composers.async_actor.model import ActorSettings
from fnplatform.composers.async_actor.resolve import resolve_spec
from fnplatform.composers.async_actor.status import Parts, report_status
from fnplatform.composition import CLAIM_NAMESPACE, Composition
from fnplatform.errors import InputError
from fnplatform.holds import Wait
from fnplatform.library import ObjectReadiness, add_object, add_queue
from fnplatform.library.queue import QueueSpec, queue_arn, queue_name
from fnplatform.request.requirements import Requirement

QUEUE, DEAD_LETTER_QUEUE = "queue", "dead-letter-queue"
SERVICE_ACCOUNT, TRIGGER_AUTH = "service-account", "trigger-auth"
#: The requirement key of the ConfigMap holding the Asya runtime script.
RUNTIME_CONFIGMAP = "runtime-configmap"
SCALED_OBJECT, DEPLOYMENT = "scaled-object", "deployment"
#: The URL upjet observes on the SQS queue: KEDA and the sidecar address the queue by it.
QUEUE_URL = "status.atProvider.url"


def compose(comp: Composition) -> None:
    """Compose one async actor for ``comp``."""
    settings = parse(ActorSettings, comp.env, "environment")
    check_settings(settings)
    comp.place(
        "aws",
        cloud_field="environment.aws",
        region=settings.aws.region,
        region_field="environment.aws.region",
        scope=settings.aws.accountId,
        scope_field="environment.aws.accountId",
    )
    comp.use_provider_configs(
        aws=settings.aws.providerConfig, kubernetes=settings.kubernetesProviderConfig
    )
    namespace = _namespace(comp)
    spec = resolve_spec(comp)
    name = spec.actor or comp.claim_name
    if not name:
        raise InputError("spec.actor", "required when the composite has no claim to name it")
    check_actor_name(comp.composite, namespace, name)
    check_pod_storage(spec, settings.runtime)
    check_queue_attributes(spec, settings)
    actor = Actor(name=name, namespace=namespace, spec=spec, settings=settings)
    comp.set_status("actor", name)
    _queue(comp, actor)
    comp.status_from(QUEUE, "status.atProvider.arn", "queueIdentifier")
    # Watched Objects: the actor's phase follows the live objects within seconds. The
    # ScaledObject and the Deployment watch by default (their readiness reads the live
    # object: library.kubernetes.watches_by_default); the TriggerAuthentication
    # (SuccessfulCreate) watches too, so its drift is repaired at once. The ServiceAccount
    # is the namespace's, shared: every actor's Object applies the same one (under a field
    # manager of its own), so each Object's first apply changes it, and a watch would
    # re-reconcile every actor's Object of the namespace on each of those changes: n actors,
    # n^2 reconciles, each writing the Object's observed manifest. 143 actors in one
    # namespace kept the API server saturated for over 20 minutes (bench/results.md,
    # "Scale"). Unwatched, its drift is repaired at the provider's poll (10 minutes).
    if settings.irsa.enabled:  # shared by the namespace's actors: never deleted with one
        add_object(
            comp, SERVICE_ACCOUNT, manifests.service_account(actor), watch=False, orphan=True
        )
    # The URL is remembered: a briefly unobserved queue keeps it in the pods and KEDA.
    if spec.scaling.enabled:
        add_object(comp, TRIGGER_AUTH, manifests.trigger_authentication(actor), watch=True)
        queue_url = comp.needs(QUEUE, QUEUE_URL, by=SCALED_OBJECT, remember="queueUrl")
        if queue_url:
            add_object(
                comp,
                SCALED_OBJECT,
                manifests.scaled_object(actor, str(queue_url)),
                readiness=ObjectReadiness.DERIVED,
                uses=(TRIGGER_AUTH,),
            )
    else:
        queue_url = comp.status_from(QUEUE, QUEUE_URL, "queueUrl")
    # Not before the queue is Ready: a replica started earlier can't find its queue, and rolls
    # again once the URL is known. Uses the queue: on deletion, pods stop consuming first.
    if _runtime_script(comp, actor) and comp.needs_ready(QUEUE, by=DEPLOYMENT):
        add_object(
            comp,
            DEPLOYMENT,
            manifests.deployment(actor, queue_url),
            readiness=ObjectReadiness.AVAILABLE,
            uses=(QUEUE,),
        )
    report_status(comp, Parts(QUEUE, SCALED_OBJECT, DEPLOYMENT), scaling=spec.scaling.enabled)


def _runtime_script(comp: Composition, actor: Actor) -> bool:
    """Whether the pods can mount the Asya runtime script: its ConfigMap exists with the key.

    The Asya operator or chart installs ``asya_runtime.py`` as a ConfigMap in each actor
    namespace; this function does not ship the script. A Deployment created without it
    would never start (``CreateContainerConfigError``), so it waits, and the Composed
    condition names the ConfigMap and the key. An existing Deployment is never held back.
    """
    runtime = actor.settings.runtime
    found = comp.require(
        Requirement(
            RUNTIME_CONFIGMAP,
            "v1",
            "ConfigMap",
            match_name=runtime.configMap,
            namespace=actor.namespace,
        )
    )
    if DEPLOYMENT in comp.observed:
        return True
    key = runtime.scriptPath.rsplit("/", 1)[-1]
    where = f"ConfigMap {runtime.configMap} in namespace {actor.namespace}"
    if not found:
        comp.hold(
            DEPLOYMENT,
            Wait(
                None,
                f"{where} holding the Asya runtime script {key} "
                "(runtime.configMap; docs/async-actor.md)",
            ),
        )
        return False
    configmap = found[0]
    if key not in (configmap.get("data") or {}) and key not in (configmap.get("binaryData") or {}):
        comp.hold(DEPLOYMENT, Wait(None, f"key {key} in {where} (runtime.scriptPath names it)"))
        return False
    return True


def _namespace(comp: Composition) -> str:
    """The claim's namespace: where every Kubernetes object of the actor goes."""
    if not comp.namespace:
        raise InputError(
            f"metadata.labels.{CLAIM_NAMESPACE}",
            "not set; create an AsyncActor claim in a namespace rather than an XAsyncActor",
        )
    return comp.namespace


def _queue(comp: Composition, actor: Actor) -> None:
    """The actor's queue ``asya-<namespace>-<actor>``, redriving to the namespace's DLQ.

    SQS refuses a redrive policy whose target does not exist (rule SQS_REDRIVE_TARGET_EXISTS
    of platform/providersim/simulation.py), so the dead-letter queue is
    composed too (shared by the namespace's actors: created once, never updated or deleted by
    one of them) and the actor's queue waits for it to be Ready. Its ARN is known before it
    is observed only with ``aws.accountId``; without, there is no redrive (docs say so).
    """
    named = {"queue_name": "spec.actor"}
    actor_queue = queue_name.at(fields=named)(comp, "asya", actor.namespace, actor.name)
    dlq = actor.settings.dlq
    dlq_name = queue_name(comp, "asya", actor.namespace, DLQ_SUFFIX)
    dead_letter = queue_arn(comp, dlq_name) if dlq.enabled else None
    if dead_letter:
        add_queue(
            comp,
            DEAD_LETTER_QUEUE,
            QueueSpec(
                queue_name=dlq_name,
                message_retention_seconds=dlq.retentionSeconds,
                tags={"asya.sh/namespace": actor.namespace},
                shared=True,
            ),
        )
        if not comp.needs_ready(DEAD_LETTER_QUEUE, by=QUEUE):
            return
    attributes = actor.settings.queue.under(actor.spec.queue)
    max_receive = actor.settings.dlq.maxReceiveCount
    retry = actor.spec.resiliency.retry if actor.spec.resiliency else None
    if retry is not None and retry.maxAttempts is not None:
        max_receive = retry.maxAttempts
    add_queue(
        comp,
        QUEUE,
        QueueSpec(
            queue_name=actor_queue,
            visibility_timeout_seconds=attributes.visibilityTimeoutSeconds,
            message_retention_seconds=attributes.messageRetentionSeconds,
            receive_wait_time_seconds=attributes.receiveWaitTimeSeconds,
            dead_letter_arn=dead_letter,
            max_receive_count=max_receive,
            tags={"asya.sh/namespace": actor.namespace, "asya.sh/actor": actor.name},
        ),
    )
