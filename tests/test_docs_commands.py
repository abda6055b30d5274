"""Every shell command the README and docs/ print runs, exactly as printed, and succeeds.

A command is whatever sits in a fenced block whose language is ``sh`` (or bash/shell/console):
that is the marker. Each block runs as one ``bash -e -o pipefail`` script from the repository
root, with a timeout, after ``make setup`` and with ``.bin/crossplane`` installed (what a user has
done by then). A command that cannot run here is listed in ``NOT_RUN`` with the reason; an entry
that no longer appears in the docs fails ``test_not_run_lists_only_printed_commands``.

Blocks that serve the function on the fixed port 9443 run in their own network namespace when
the machine allows one (``unshare -n``), so a developer's ``make serve`` or another test run
cannot answer in their place.

A block that says it reproduces a golden render carries the comment ``# golden:
tests/golden/<module>/<case>.yaml``: what it prints, from its first document on (``make`` echoes
its commands first) and with the engine's events in the order ``make render`` prints them
(``render_examples.stable_events``: the engine records them in Go map order), must be that
file byte for byte.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shutil
import signal
import socket
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
BLOCK_TIMEOUT_S = 900
FIXED_PORT = 9443

PUBLISH_COMMANDS = (
    "docker buildx build --platform linux/amd64 --output type=docker,dest=build/image-amd64.tar .",
    "docker buildx build --platform linux/arm64 --output type=docker,dest=build/image-arm64.tar .",
    ".bin/crossplane xpkg build --package-root=package --examples-root=examples "
    "--embed-runtime-image-tarball=build/image-amd64.tar "
    "--package-file=build/function-platform-amd64.xpkg",
    ".bin/crossplane xpkg build --package-root=package --examples-root=examples "
    "--embed-runtime-image-tarball=build/image-arm64.tar "
    "--package-file=build/function-platform-arm64.xpkg",
    ".bin/crossplane xpkg push --package-files=build/function-platform-amd64.xpkg,"
    "build/function-platform-arm64.xpkg xpkg.upbound.io/myplatform/function-platform:v0.1.0",
)
CLUSTER_COMMANDS = (
    "kubectl -n crossplane-system logs -l pkg.crossplane.io/function=function-platform --tail=100",
    "crossplane resource trace cluster.myplatform.io/prod-eu-gcp -n team-payments",
    "kubectl get xcluster prod-eu-gcp-7xk2p -o "
    "jsonpath='{.status.conditions[?(@.type==\"Composed\")].message}'",
    "kubectl get xcluster prod-eu-gcp-7xk2p -o yaml > build/live/xr.yaml",
    "kubectl get managed -l crossplane.io/composite=prod-eu-gcp-7xk2p -o json | "
    ".venv/bin/python -c 'import json, sys, yaml; "
    'print(yaml.safe_dump_all(json.load(sys.stdin)["items"]))\' > build/live/observed.yaml',
    "kubectl apply -f examples/install/10-providers.yaml",
    "kubectl apply -f examples/install/15-activation-policy.yaml",
    "kubectl apply -f examples/install/20-provider-configs.yaml",
    "kubectl apply -f examples/install/30-keda.yaml",
    "kubectl apply -f examples/install/40-function.yaml",
    "kubectl apply -f apis/cluster/definition.yaml -f apis/cluster/composition.yaml",
    # docs/rendering.md: exporting a live composite to render it offline
    "kubectl get managed -l crossplane.io/composite=prod-eu-gcp-7xk2p -o yaml "
    "> build/live/observed.yaml",
    "kubectl get environmentconfigs -o json | .venv/bin/python -c 'import json, sys, yaml; "
    'print(yaml.safe_dump_all(json.load(sys.stdin)["items"]))\' '
    "> build/live/platform/environment.yaml",
)

# Printed commands this test does not run, and why. Keys are the command as printed, without
# its trailing comment.
NOT_RUN: dict[str, str] = {
    "make test": "the whole suite, this test included: it would run itself",
    "make test-e2e": "tests/test_e2e_render.py, which this same suite runs",
    "UPDATE_GOLDEN=1 make test-e2e": (
        "rewrites tests/golden/; tests/test_e2e_render.py in this suite runs the same renders"
    ),
    "UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_whole_response.py": (
        "rewrites tests/whole-response/, which tests/test_whole_response.py in this suite "
        "compares: run here it would pass any change unseen"
    ),
    # README "A CI pipeline on the environment module": what a pipeline runs against a live
    # control plane with the environment module installed and cloud credentials.
    "kubectl apply -f examples/environment/claim-aws.yaml": "needs a live Crossplane cluster",
    # docs/async-actor.md "The runtime script": the platform installs the Asya release's script
    "kubectl -n ml create configmap asya-runtime --from-file=asya_runtime.py=./asya_runtime.py": (
        "needs a cluster and the Asya release's asya_runtime.py, which this repository does not "
        "ship; tests/test_async_actor.py holds the Deployment until the ConfigMap exists"
    ),
    # docs/async-actor.md "Helm install"
    "helm install asya-crossplane deploy/helm-charts/asya-crossplane --namespace "
    "crossplane-system --set awsProviderConfig.credentialsSource=IRSA --set-string "
    "awsAccountId=123456789012 --set actorNamespace=asya-e2e "
    "--set-file runtime.script=./asya_runtime.py": (
        "needs a Kubernetes cluster running Crossplane and the Asya release's asya_runtime.py; "
        "tests/test_helm_chart.py renders the chart, tests/live/test_live_helm.py applies it"
    ),
    "kubectl -n payments wait environmentclaim/payments-squad --for=condition=Ready "
    "--timeout=30m": "needs a live Crossplane cluster",
    "BUCKET=$(kubectl -n payments get environmentclaim payments-squad "
    "-o jsonpath='{.status.frontendBucketName}')": "needs a live Crossplane cluster",
    'aws s3 sync dist/ "s3://${BUCKET}/" --delete': "needs AWS credentials and a built frontend",
    "kubectl -n payments get environmentclaim payments-squad "
    "-o jsonpath='{.status.cdnDomainName}'": "needs a live Crossplane cluster",
    **dict.fromkeys(PUBLISH_COMMANDS, "needs docker with buildx, and registry credentials"),
    "helm install crossplane crossplane-stable/crossplane --version 2.4.0 "
    "--namespace crossplane-system --create-namespace "
    "--set 'args={--circuit-breaker-burst=2000}'": (
        "needs a Kubernetes cluster and the chart repository; tests/test_install_examples.py "
        "keeps its version and args equal to the GitOps HelmRelease the live test runs core with"
    ),
    **dict.fromkeys(
        CLUSTER_COMMANDS,
        "needs a Kubernetes cluster running Crossplane; "
        "tests/test_install_examples.py validates every object against its CRD",
    ),
    ".venv/bin/python tools/derive_schemas.py --source ../upstream-crds --out schemas/crds": (
        "needs the upstream CRDs next to the repository, which it does not ship; "
        "tests/test_schema_validator.py covers the derived files"
    ),
    ".venv/bin/python tools/derive_namespaced_kinds.py --source ../upstream-crds": (
        "needs the upstream CRDs checked out next to the repository; tests/test_namespaced.py "
        "checks the derived table against schemas/crds"
    ),
    "crossplane xpkg install configuration "
    "xpkg.upbound.io/myplatform/platform-async-actor:v0.1.0 platform-async-actor": (
        "needs a Kubernetes cluster running Crossplane and the published package; "
        "tests/live/test_live_configuration.py installs the same Configuration from the "
        "package make package builds"
    ),
    # docs/release.md: cutting, pushing and installing a release
    "make release VERSION=0.1.0 REGISTRY=registry.example.com/platform": (
        "builds a whole release as root in minutes; tests/release/test_release_image.py "
        "(make test-release, in CI) builds one and runs its image"
    ),
    ".bin/crossplane xpkg push -f build/release/function-platform-v0.1.0.xpkg "
    "registry.example.com/platform/function-platform:v0.1.0": (
        "needs a built release and registry credentials"
    ),
    ".bin/crossplane xpkg push -f build/release/platform-async-actor-v0.1.0.xpkg "
    "registry.example.com/platform/platform-async-actor:v0.1.0": (
        "needs a built release and registry credentials"
    ),
    "kubectl apply -f build/release/40-function.yaml": (
        "needs a Kubernetes cluster running Crossplane; tests/release/test_release_image.py "
        "checks the file"
    ),
    "crossplane xpkg install configuration "
    "registry.example.com/platform/platform-async-actor:v0.1.0 platform-async-actor": (
        "needs a Kubernetes cluster running Crossplane and the pushed release"
    ),
    "kubectl apply -f apis/cluster/definition.yaml -f apis/cluster/composition.yaml": (
        "installs into a live Crossplane cluster; tests/test_apis.py validates both files"
    ),
    "kubectl apply -f examples/cluster/claim-gcp.yaml": (
        "needs a live Crossplane cluster; tests/test_apis.py checks the claim against the XRD"
    ),
    "kubectl apply -f apis/cluster/namespaced/definition.yaml "
    "-f apis/cluster/namespaced/composition.yaml": (
        "installs into a live Crossplane cluster; tests/test_apis.py validates both files"
    ),
    "make render XR=build/live/xr.yaml OBSERVED=build/live/observed.yaml": (
        "renders what the kubectl commands before it export from a live cluster; "
        "tests/test_render_own.py renders recorded observed states the same way"
    ),
    # docs/playground.md and README "Try it": the playground, a live control plane left running
    **dict.fromkeys(
        (
            "make playground",
            "export KUBECONFIG=$PWD/.playground/kubeconfig",
            "kubectl apply -f examples/async-actor/claim.yaml",
            "kubectl wait -n ml --for=condition=Ready --timeout=300s "
            "asyncactors.asya.sh/text-processor",
            ".bin/crossplane resource trace -n ml asyncactors.asya.sh/text-processor",
            "kubectl delete -f examples/async-actor/claim.yaml",
            "make playground-down",
        ),
        "starts a live control plane (needs root and the live binaries); "
        "tests/live/test_playground.py runs docs/playground.md's block as printed (make test-live)",
    ),
    # docs/upgrading.md "Preview an upgrade": the preview of a live cluster; the block after it
    # (an export of a v0.1.0 fixture, previewed) runs here
    **dict.fromkeys(
        (
            "make upgrade-preview RUNNING=de7f94b KUBECONFIG=$HOME/.kube/config "
            "SAVE_EXPORT=build/preview/cluster.yaml",
            ".venv/bin/python -m fnplatform.upgrade preview --running de7f94b "
            "--kubeconfig $HOME/.kube/config --context prod",
            ".venv/bin/python -m fnplatform.upgrade preview --running de7f94b "
            "--from build/preview/cluster.yaml",
        ),
        "needs a Kubernetes cluster running Crossplane and the function; "
        "tests/live/test_live_upgrade.py previews the live control plane through kubectl "
        "(make test-live), tests/test_upgrade_preview.py previews exports",
    ),
    "kubectl apply -f examples/cluster/namespaced/xr-gcp.yaml": (
        "needs a live Crossplane cluster; tests/test_e2e_render.py renders and validates it"
    ),
}

FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
GOLDEN_MARKER = re.compile(r"^\s*#\s*golden:\s*(?P<path>\S+)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced shell block: where it is printed and its command lines."""

    document: Path
    line: int
    commands: tuple[str, ...]
    golden: Path | None = None  # the golden render the block's output must be

    @property
    def id(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"

    @property
    def script(self) -> str:
        return "\n".join(c for c in self.commands if command_key(c) not in NOT_RUN)


def command_key(command: str) -> str:
    """The command without its trailing ``# comment`` and surrounding blanks."""
    return re.sub(r"\s+#.*$", "", command.replace("\\\n", " ")).strip()


def shell_blocks(document: Path) -> list[Block]:
    """Every ``sh``-like fenced block of ``document``; continuation lines stay together."""
    blocks: list[Block] = []
    lines = document.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if not opening:
            continue
        start, body = index, []
        while index < len(lines) and not FENCE.match(lines[index]):
            body.append(lines[index][len(opening["indent"]) :])
            index += 1
        index += 1  # the closing fence
        if opening["lang"] not in SHELL_LANGUAGES:
            continue
        commands: list[str] = []
        golden: Path | None = None
        for text in body:
            if commands and commands[-1].rstrip().endswith("\\"):
                commands[-1] += "\n" + text
            elif (marker := GOLDEN_MARKER.match(text)) is not None:
                golden = ROOT / marker["path"]
            elif text.strip() and not text.lstrip().startswith("#"):
                commands.append(text)
        blocks.append(Block(document, start, tuple(commands), golden))
    return blocks


BLOCKS = [block for document in DOCUMENTS for block in shell_blocks(document)]


@cache
def network_namespace_prefix() -> tuple[str, ...] | None:
    """``unshare`` arguments for a private network namespace with loopback up, if allowed."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    prefix = ("unshare", "-n") if os.getuid() == 0 else ("unshare", "-r", "-n")
    probe = subprocess.run(
        [*prefix, "ip", "link", "set", "lo", "up"], capture_output=True, check=False
    )
    return prefix if probe.returncode == 0 else None


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def user_setup() -> None:
    """What a user has done before the documented commands: ``make setup`` and ``make cli``."""
    for target in ("setup", "cli"):
        subprocess.run(["make", "--no-print-directory", target], cwd=ROOT, check=True)


#: A user's shell, not a recipe of ``make test``: a printed ``make`` run from inside another
#: make inherits MAKELEVEL and prints "make[1]: Entering/Leaving directory" on stdout.
USER_SHELL_ENV = {
    k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")
}


def run_block(block: Block) -> subprocess.CompletedProcess[str]:
    """Run the block as one script in its own process group; stop what it left running."""
    command = ["bash", "-e", "-o", "pipefail", "-c", block.script]
    if str(FIXED_PORT) in block.script:
        prefix = network_namespace_prefix()
        if prefix is not None:
            command = [*prefix, "bash", "-c", 'ip link set lo up && exec "$@"', "bash", *command]
        elif port_in_use(FIXED_PORT):
            pytest.fail(f"{block.id} serves on {FIXED_PORT}, which something else already uses")
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=USER_SHELL_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{block.id} did not finish in {BLOCK_TIMEOUT_S}s:\n{stdout}\n{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.e2e
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_printed_commands_run(block: Block, user_setup: None) -> None:
    if not block.script.strip():
        assert all(command_key(c) in NOT_RUN for c in block.commands)
        return
    result = run_block(block)
    assert result.returncode == 0, (
        f"{block.id} failed ({result.returncode}):\n{block.script}\n"
        f"--- stdout (tail)\n{result.stdout[-3000:]}\n--- stderr (tail)\n{result.stderr[-3000:]}"
    )
    if block.golden is not None:
        from tests.test_e2e_render import render_tool

        printed = render_tool.stable_events(rendered_documents(result.stdout))
        expected = block.golden.read_text()
        difference = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                printed.splitlines(keepends=True),
                str(block.golden.relative_to(ROOT)),
                "printed",
                n=2,
            )
        )
        assert printed == expected, (
            f"{block.id} says it reproduces {block.golden.relative_to(ROOT)}, but prints "
            f"something else:\n{difference[:6000]}\n--- stderr (tail)\n{result.stderr[-2000:]}"
        )


def rendered_documents(stdout: str) -> str:
    """``stdout`` from its first YAML document on: a render's output after what ``make``
    echoed before it."""
    lines = stdout.splitlines(keepends=True)
    first = next(
        (i for i, line in enumerate(lines) if line == "---\n" or line.startswith("apiVersion: ")),
        len(lines),
    )
    return "".join(lines[first:])


GOLDEN_BLOCKS = [block for block in BLOCKS if block.golden is not None]


def test_golden_markers_name_goldens() -> None:
    """Each block that claims to reproduce a golden names one that exists; the rendering
    guide's hand-render and offline recipes are among them."""
    assert [b.id for b in GOLDEN_BLOCKS if b.golden is None or not b.golden.is_file()] == []
    assert len([b for b in GOLDEN_BLOCKS if b.document.name == "rendering.md"]) >= 3


def test_docs_print_commands() -> None:
    """The marker is in use: README's first-hour commands are picked up."""
    keys = {command_key(c) for b in BLOCKS for c in b.commands}
    assert {"make render", "make test"} <= keys


def test_not_run_lists_only_printed_commands() -> None:
    printed = {command_key(c) for b in BLOCKS for c in b.commands}
    assert set(NOT_RUN) - printed == set()


def test_no_placeholders_in_commands() -> None:
    """``<file>``-style placeholders cannot run: print a real command or describe it in prose."""
    placeholders = [
        f"{b.id}: {c}"
        for b in BLOCKS
        for c in b.commands
        if re.search(r"<[\w -]+>", command_key(c))
    ]
    assert placeholders == []


#: What only makes sense on the machine or to the people who wrote the project.
NOT_FOR_USERS = {
    "/work/": "a machine-local path",
    "module proxy": "a note about one build environment",
    "the seed": "a word only the authors know",
    "seed's": "a word only the authors know",
}


def test_docs_are_written_for_a_user_with_only_the_repository():
    texts = [
        *DOCUMENTS,
        *sorted((ROOT / "examples").rglob("*.yaml")),
        *sorted((ROOT / "apis").rglob("*.yaml")),
        ROOT / "package" / "crossplane.yaml",
    ]
    found = [
        f"{path.relative_to(ROOT)}: {phrase!r} ({why})"
        for path in texts
        for phrase, why in NOT_FOR_USERS.items()
        if phrase in path.read_text().lower()
    ]
    assert found == []
