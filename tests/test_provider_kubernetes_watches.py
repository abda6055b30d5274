"""provider-kubernetes watches what the modules wait for, with the args the install set ships,
in a cluster and in the live test alike (issue 30 item 7): run in `make test`, without a
control plane.

The live test used to start the provider with `--poll=15s --sync=1m` while
examples/install/10-providers.yaml gave it the provider's defaults (a 10-minute poll, watches
off), so every step waiting on an Object's status took seconds there and up to 10 minutes for a
user. Now the install set turns watches on, tests/live/providers.py reads the args from
examples/install and adds only process-local ports, and every Object whose readiness reads the
live object sets `spec.watch: true` (fnplatform.library.kubernetes.watches_by_default).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.live.providers import (
    INSTALL,
    PROVIDER_KUBERNETES_HARNESS_ARGS,
    provider_kubernetes_command,
    shipped_args,
)
from tests.support.cases import (
    ModuleCase,
    baseline_unavailable,
    converge,
    in_both_forms,
    module_cases,
)

ROOT = Path(__file__).resolve().parent.parent
#: The flags of provider-kubernetes' cmd/provider/main.go (kingpin `app.Flag`) per release
#: this repository installs or builds; a release missing here fails the test below: add its
#: flags from that file.
_COMMON = {
    "changelogs-socket-path",
    "debug",
    "enable-changelogs",
    "enable-management-policies",
    "enable-server-side-apply",
    "enable-watches",
    "health-probe-bind-addr",
    "leader-election",
    "legacy-csa-field-managers",
    "max-reconcile-rate",
    "poll",
    "poll-jitter-percentage",
    "poll-state-metric",
    "sanitize-secrets",
    "sync",
}
_SINCE_1_3 = {
    "enable-secret-cache",
    "metrics-bind-address",
    "remove-managed-fields",
    "webhook-port",
}
FLAGS: dict[str, set[str]] = {
    "v1.2.1": _COMMON,
    "v1.3.1": _COMMON | _SINCE_1_3,
    "v1.4.1": _COMMON | _SINCE_1_3 | {"certs-dir"},
}
#: Boolean flags: given bare (`--enable-watches`) or negated (`--no-enable-watches`); kingpin
#: reads `--enable-watches=true` as the flag plus a stray argument and refuses it
#: ("unexpected true"), so the provider would not start.
BOOLEAN = {
    "debug",
    "leader-election",
    "sanitize-secrets",
    "enable-changelogs",
    "enable-management-policies",
    "enable-server-side-apply",
    "enable-watches",
    "enable-secret-cache",
    "remove-managed-fields",
}
#: Where the provider listens: the only thing the harness may set (one shared network
#: namespace instead of a pod's own).
LISTENERS = {"metrics-bind-address", "health-probe-bind-addr", "webhook-port"}


def _name(arg: str) -> str:
    name = arg.split("=", 1)[0].removeprefix("--")
    return name.removeprefix("no-") if name.removeprefix("no-") in BOOLEAN else name


def _installed_version() -> str:
    providers = [
        d
        for d in yaml.safe_load_all((INSTALL / "10-providers.yaml").read_text())
        if d and d["kind"] == "Provider" and d["metadata"]["name"] == "provider-kubernetes"
    ]
    return str(providers[0]["spec"]["package"]).rpartition(":")[2]


def _live_version() -> str:
    go_mod = (ROOT / "tools/live/provider-kubernetes/go.mod").read_text()
    found = re.search(r"github\.com/crossplane-contrib/provider-kubernetes (v[\d.]+)", go_mod)
    assert found, "tools/live/provider-kubernetes/go.mod pins no provider-kubernetes"
    return found[1]


def test_the_install_set_turns_watches_on_and_says_its_poll() -> None:
    args = shipped_args("provider-kubernetes")
    assert "--enable-watches" in args  # spec.watch is ignored without it (off before v1.4)
    assert "--no-enable-watches" not in args
    # explicit, so a cluster and the live test poll alike whatever a release's default is
    assert [a for a in args if _name(a) == "poll"], args


@pytest.mark.parametrize("where", ["installed", "built for the live test"])
def test_every_shipped_arg_is_a_flag_of_the_release(where: str) -> None:
    version = _installed_version() if where == "installed" else _live_version()
    assert version in FLAGS, f"add provider-kubernetes {version}'s flags to FLAGS"
    for arg in shipped_args("provider-kubernetes"):
        assert arg.startswith("--") and _name(arg) in FLAGS[version], (version, arg)
        if _name(arg) in BOOLEAN:
            assert "=" not in arg, f"{arg}: give a boolean flag bare (kingpin)"
        else:
            assert "=" in arg, f"{arg}: give a value in the same argument"


def test_the_live_test_runs_exactly_the_shipped_args_plus_its_ports() -> None:
    command = provider_kubernetes_command(Path("/bin/provider"))
    assert command == [
        "/bin/provider",
        *shipped_args("provider-kubernetes"),
        *PROVIDER_KUBERNETES_HARNESS_ARGS,
    ]
    assert {_name(a) for a in PROVIDER_KUBERNETES_HARNESS_ARGS} <= LISTENERS
    assert {_name(a) for a in PROVIDER_KUBERNETES_HARNESS_ARGS} <= FLAGS[_live_version()]
    assert not [
        a
        for a in command
        if _name(a) in {"poll", "sync"} and a not in shipped_args("provider-kubernetes")
    ]


def _install(tmp_path: Path, provider: dict[str, object], *configs: dict[str, object]) -> Path:
    (tmp_path / "10-providers.yaml").write_text(yaml.safe_dump_all([provider, *configs]))
    return tmp_path


def _provider(runtime_config: str | None = None) -> dict[str, object]:
    spec: dict[str, object] = {"package": "xpkg.crossplane.io/x/provider-kubernetes:v1.3.1"}
    if runtime_config:
        spec["runtimeConfigRef"] = {"name": runtime_config}
    return {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": "provider-kubernetes"},
        "spec": spec,
    }


def _runtime_config(name: str, containers: list[dict[str, object]]) -> dict[str, object]:
    return {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": name},
        "spec": {
            "deploymentTemplate": {
                "spec": {"selector": {}, "template": {"spec": {"containers": containers}}}
            }
        },
    }


def test_args_come_from_the_package_runtime_container_of_the_named_config(tmp_path: Path) -> None:
    install = _install(
        tmp_path,
        _provider("pk"),
        _runtime_config("other", [{"name": "package-runtime", "args": ["--poll=1s"]}]),
        _runtime_config(
            "pk",
            [
                {"name": "sidecar", "args": ["--ignored"]},
                {"name": "package-runtime", "args": ["--enable-watches", "--poll=2m"]},
            ],
        ),
    )
    assert shipped_args("provider-kubernetes", install) == ["--enable-watches", "--poll=2m"]


def test_crossplanes_default_config_sets_no_args(tmp_path: Path) -> None:
    assert shipped_args("provider-kubernetes", _install(tmp_path, _provider())) == []


def test_a_missing_config_or_provider_is_an_error(tmp_path: Path) -> None:
    install = _install(tmp_path, _provider("absent"))
    with pytest.raises(LookupError, match="absent"):
        shipped_args("provider-kubernetes", install)
    with pytest.raises(LookupError, match="provider-helm"):
        shipped_args("provider-helm", install)


@pytest.mark.parametrize("arg", ["--webhook-port=9443", "--metrics-bind-address=:8080"])
def test_a_shipped_port_the_harness_sets_is_refused_not_overridden(
    tmp_path: Path, arg: str
) -> None:
    install = _install(
        tmp_path,
        _provider("pk"),
        _runtime_config("pk", [{"name": "package-runtime", "args": ["--enable-watches", arg]}]),
    )
    with pytest.raises(ValueError, match=re.escape(arg)):
        provider_kubernetes_command(Path("/bin/provider"), install)


# -- which Objects watch -----------------------------------------------------------------------

CASES = in_both_forms(module_cases())  # each module's case, and its v2 namespaced twin
#: Objects that watch although their readiness is SuccessfulCreate, on purpose: the actor's
#: TriggerAuthentication (docs/async-actor.md), whose drift is repaired at once. Any other
#: would open an informer on its cluster for nothing waited on; the actor's ServiceAccount,
#: shared by the namespace's actors, must not (every change would reach all their Objects).
WATCHED_ANYWAY = {("async-actor", "trigger-auth")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_object_watches_exactly_when_its_readiness_reads_the_live_object(
    client, case: ModuleCase
) -> None:
    rendered, _ = converge(client.run, case)
    if why := baseline_unavailable(rendered):
        pytest.skip(why)
    for name, body in rendered.resources.items():
        if body.get("kind") != "Object":
            continue
        policy = (body["spec"].get("readiness") or {}).get("policy", "SuccessfulCreate")
        watches = body["spec"].get("watch") is True
        if policy != "SuccessfulCreate":
            assert watches, f"{name}: readiness {policy} without spec.watch"
        else:
            assert watches == ((case.module, name) in WATCHED_ANYWAY), name
