"""The upgrade preview (``python -m fnplatform.upgrade preview``) says what an upgrade does.

Each row previews a composite a cluster running v0.1.0 holds (an upgrade fixture,
``tests/upgrade/0.1.0/``, exported as ``--save-export`` writes a cluster:
tests/support/upgrade_export.py) with the running release = v0.1.0 (its commit, served by the
preview from ``git archive``, or once for the module at its address) and a candidate: this
checkout, or a candidate that answers as this checkout does and then does one harmful thing
(tests/support/upgrade_candidate.py). The preview runs as a user runs it, a process, through
the real ``crossplane composition render``; each row asserts on what it prints and its exit
code. Bad input gets one line on stderr, exit 2, no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.upgrade import functions, inputs
from fnplatform.upgrade.preview import (
    EXIT_BAD_INPUT,
    EXIT_DATA_LOSS,
    EXIT_REFUSED,
    EXIT_SAFE,
)

from tests.support import upgrade_candidate
from tests.support.table import case
from tests.support.upgrade_candidate import Mutation
from tests.support.upgrade_export import export_of

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "upgrade" / "0.1.0"
#: The commit v0.1.0 was cut from (tests/upgrade/0.1.0/*: ``commit``).
RELEASE = "de7f94b"
ENVIRONMENT = FIXTURES / "environment" / "aws.yaml"
NAMESPACED_CLUSTER = FIXTURES / "cluster" / "namespaced" / "gcp.yaml"


def preview(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m fnplatform.upgrade preview <args>``, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "fnplatform.upgrade", "preview", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def write_export(fixture: Path, target: Path) -> Path:
    inputs.write_export(export_of(yaml.safe_load(fixture.read_text())), target)
    return target


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """v0.1.0's function served once for the rows that give its address."""
    workdir = tmp_path_factory.mktemp("release")
    with functions.served(RELEASE, "running", workdir) as served:
        yield served.address


@dataclass(frozen=True)
class Row:
    fixture: Path
    mutation: Mutation | None  # None: the candidate is this checkout
    code: int
    prints: tuple[str, ...]
    not_prints: tuple[str, ...] = field(default=())


ROWS = [
    case(
        "v0.1.0 to this checkout changes nothing on a converged AWS environment",
        Row(
            ENVIRONMENT,
            None,
            EXIT_SAFE,
            ("No changes.", "Total: no changes across 1 composite (1 unchanged)"),
            ("+++", "---", "~~~", "-/+"),
        ),
        id="no-change",
    ),
    case(
        "dropping the database from desired state deletes an RDS instance: stateful, "
        "called out, exit 4",
        Row(
            ENVIRONMENT,
            Mutation(drop=("database",)),
            EXIT_DATA_LOSS,
            (
                "--- Instance/payments-squad-k4x9p-database (database) "
                "! STATEFUL: deleted with its data",
                "- kind: Instance",
                "Summary: 1 removed; STATEFUL deleted or replaced: database",
                "Total: 1 removed across 1 composite (1 stateful deleted or replaced)",
            ),
        ),
        id="delete-stateful",
    ),
    case(
        "dropping a security group rule deletes it, stateless: listed, exit 0",
        Row(
            ENVIRONMENT,
            Mutation(drop=("database-ingress",)),
            EXIT_SAFE,
            (
                "--- SecurityGroupIngressRule/payments-squad-k4x9p-database-ingress "
                "(database-ingress)\n",
                "Summary: 1 removed\n",
            ),
            ("STATEFUL",),
        ),
        id="delete-stateless",
    ),
    case(
        "another database engine is an immutable field: the instance is replaced, exit 4",
        Row(
            ENVIRONMENT,
            Mutation(fields={"database": {"spec.forProvider.engine": "mysql"}}),
            EXIT_DATA_LOSS,
            (
                "-/+ Instance/payments-squad-k4x9p-database (database) "
                "! STATEFUL: replaced: its data is lost",
                "# spec.forProvider.engine 'postgres' becomes 'mysql' (immutable: ",
                "-     engine: postgres",
                "+     engine: mysql",
                "Summary: 1 replaced; STATEFUL deleted or replaced: database",
            ),
        ),
        id="replace-immutable",
    ),
    case(
        "another external name on a security group makes the provider create another: "
        "replaced, stateless, exit 0",
        Row(
            ENVIRONMENT,
            Mutation(
                fields={
                    "database-security-group": {
                        "metadata.annotations": {"crossplane.io/external-name": "sg-other"}
                    }
                }
            ),
            EXIT_SAFE,
            (
                "-/+ SecurityGroup/payments-squad-k4x9p-database-security-group "
                "(database-security-group)\n",
                "becomes 'sg-other'",
            ),
        ),
        id="replace-external-name",
    ),
    case(
        "a changed tag is updated in place: a field diff in crossplane-diff's format",
        Row(
            ENVIRONMENT,
            Mutation(fields={"assets": {"spec.forProvider.tags.cost-center": "platform"}}),
            EXIT_SAFE,
            (
                "~~~ Bucket/acme-mfe-payments-7d3f9a12 (assets) (stateful)\n",
                "-       cost-center: squads\n+       cost-center: platform\n",
                "Summary: 1 modified\n",
            ),
        ),
        id="change-in-place",
    ),
    case(
        "a resource the candidate adds is created",
        Row(
            NAMESPACED_CLUSTER,
            Mutation(
                add={
                    "extra": {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "extra", "namespace": "team-payments"},
                    }
                }
            ),
            EXIT_SAFE,
            ("+++ ConfigMap/extra (extra)\n", "+ kind: ConfigMap", "Summary: 1 added\n"),
        ),
        id="create",
    ),
    case(
        "a fatal result refuses the composite: called out, exit 3",
        Row(
            NAMESPACED_CLUSTER,
            Mutation(fatal="spec.parameters.size: 'huge' is no longer accepted"),
            EXIT_REFUSED,
            (
                "REFUSED: spec.parameters.size: 'huge' is no longer accepted",
                "Summary: refused",
                "(1 refused)",
            ),
        ),
        id="refused",
    ),
]


@pytest.mark.parametrize("row", ROWS)
def test_the_preview_says_what_the_upgrade_does(row: Row, release: str, tmp_path: Path) -> None:
    export = write_export(row.fixture, tmp_path / "export.yaml")
    if row.mutation is None:
        result = preview("--running", RELEASE, "--from", str(export))
    else:
        with upgrade_candidate.serve(row.mutation) as candidate:
            result = preview("--running", release, "--candidate", candidate, "--from", str(export))
    where = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == row.code, where
    for text in row.prints:
        assert text in result.stdout, f"missing {text!r}: {where}"
    for text in row.not_prints:
        assert text not in result.stdout, f"unexpected {text!r}: {where}"
    assert "Traceback" not in result.stderr, where


def _not_a_composite(tmp_path: Path) -> list[str]:
    path = tmp_path / "configmap.yaml"
    path.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    )
    return ["--running", RELEASE, "--from", str(path)]


def _no_composite(tmp_path: Path) -> list[str]:
    fixture = yaml.safe_load(ENVIRONMENT.read_text())
    composition = export_of(fixture)[0]
    path = tmp_path / "composition.yaml"
    path.write_text(yaml.safe_dump(composition))
    return ["--running", RELEASE, "--from", str(path)]


def _unreachable(tmp_path: Path) -> list[str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    export = write_export(ENVIRONMENT, tmp_path / "export.yaml")
    return ["--running", f"127.0.0.1:{port}", "--from", str(export)]


def _no_revision(tmp_path: Path) -> list[str]:
    export = write_export(ENVIRONMENT, tmp_path / "export.yaml")
    return ["--running", "no-such-revision", "--from", str(export)]


def _unreachable_cluster(tmp_path: Path) -> list[str]:
    """A kubeconfig of a cluster nothing serves, read with the kubectl of tools/live/build.sh
    (``make live-binaries``) or, without it, the one on PATH."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
                "users": [{"name": "u", "user": {"token": "t"}}],
            }
        )
    )
    built = sorted((ROOT / ".bin").glob("kubectl-v*"))
    kubectl = str(built[-1]) if built else "kubectl"
    return ["--running", RELEASE, "--kubeconfig", str(kubeconfig), "--kubectl", kubectl]


BAD_INPUT: list[Any] = [
    case(
        "an export that does not exist",
        lambda tmp: ["--running", RELEASE, "--from", str(tmp / "nope.yaml")],
        "nope.yaml: no such file",
        id="no-such-file",
    ),
    case(
        "an export of something that is no composite (no Composition runs the function)",
        _not_a_composite,
        "no Composition runs the function 'function-platform'",
        id="not-a-composite",
    ),
    case(
        "an export with the Composition but no composite",
        _no_composite,
        "holds no composite of the function 'function-platform'",
        id="no-composite",
    ),
    case(
        "a running function at an address nothing listens on",
        _unreachable,
        "nothing listens there (connection refused)",
        id="unreachable-address",
    ),
    case(
        "a running release that is no revision of the repository",
        _no_revision,
        "git rev-parse",
        id="no-such-revision",
    ),
    case(
        "a cluster nothing serves: kubectl's reason, in one line",
        _unreachable_cluster,
        "kubectl get compositions.apiextensions.crossplane.io: The connection to the server "
        "127.0.0.1:1 was refused",
        id="unreachable-cluster",
    ),
    case(
        "a kubeconfig that does not exist",
        lambda tmp: ["--running", RELEASE, "--kubeconfig", str(tmp / "kubeconfig")],
        "kubeconfig: no such kubeconfig",
        id="no-kubeconfig",
    ),
]


@pytest.mark.parametrize(("arguments", "says"), BAD_INPUT)
def test_bad_input_gets_one_line_and_exit_2(arguments: Any, says: str, tmp_path: Path) -> None:
    result = preview(*arguments(tmp_path))
    lines = result.stderr.strip().splitlines()
    where = f"exit {result.returncode}, stderr:\n{result.stderr}"
    assert result.returncode == EXIT_BAD_INPUT, where
    assert len(lines) == 1, where
    assert lines[0].startswith("preview: ") and says in lines[0], where
    assert result.stdout == "", where
