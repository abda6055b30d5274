"""The Configuration packages: one per module and form, each installing one module in one step.

    python tools/make_configurations.py                    # (re)write configurations/
    python tools/make_configurations.py --check            # exit 1 when configurations/ is stale
    python tools/make_configurations.py --build build      # build/<package>.xpkg, every package
    python tools/make_configurations.py --build DIR --only platform-async-actor
    python tools/make_configurations.py --build DIR --registry localhost:5000/platform

``make configurations`` runs the first, ``make lint`` the second, ``make package`` the third,
``make release`` (tools/release.py) the last: the release's packages, named
``<package>-v<version>.xpkg``, depending on ``<registry>/function-platform``.

A module's two forms define the same kinds (the v1 claims of ``apis/<module>/`` and the v2
namespaced composites of ``apis/<module>/namespaced/``), so each form is its own package:
``platform-<module>`` and ``platform-<module>-namespaced``. What is written to git is only what
no other file says, derived and checked like ``examples/install/15-activation-policy.yaml``:

* ``configurations/<package>/crossplane.yaml``: the ``meta.pkg.crossplane.io/v1``
  Configuration: the Crossplane range of the function's own package (``package/crossplane.yaml``)
  and ``dependsOn`` the function (its repository in ``examples/install/40-function.yaml``, at
  ``^v<version>`` of ``function/__version__.py``: that release or a later compatible one) and
  exactly the provider packages whose kinds the module composes in that form, at the release
  ``examples/install/10-providers.yaml`` pins as the floor (``^<pin>``: that release or a later
  one of the same major; the schemas the tests validate against are the pin's);
* ``configurations/<package>/activation-policy.yaml``: the ManagedResourceActivationPolicy
  naming exactly the MRDs the module composes in that form (issue 33, item 6). Crossplane v2.4
  accepts one in a Configuration package (crossplane-runtime v2.4.0 ``pkg/xpkg/lint.go``,
  ``NewConfigurationLinter``: XRDs, ``ManagedResourceActivationPolicy``, Compositions and
  Operations), so the package carries it and installing the module activates what it needs.

The XRDs and Compositions are not copied into git: ``--build`` stages each package from
``apis/<module>/`` (the form's definition and Composition files, the document-named copies in
``compositions/`` included), its ``configurations/<package>/`` files and the form's examples
(``examples/<module>/`` without ``namespaced/``, or ``examples/<module>/namespaced/``), and runs
``crossplane xpkg build`` on the staging directory.

What a module composes is read from what the function really emits: the module's goldens
(``tests/golden/<module>/`` for the v1 form, ``.../namespaced/`` for the v2 form, every render
case's composed resources). Kinds no golden shows (options only unit tests reach, resources of
later passes than a golden's) are :data:`UNRENDERED`, each with the capability that emits it.
``tests/test_configurations.py`` converges every module case in both forms and fails naming a
composed kind whose provider a package does not depend on or whose MRD it does not activate, and
proves every managed kind the library declares is attributed to some module.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "platform"), str(ROOT), str(ROOT / "tools")]

import make_activation_policy  # noqa: E402
from fnplatform.cloud import cloud_profiles  # noqa: E402
from fnplatform.kinds import Kind, kind_of, namespaced_twin, registered  # noqa: E402

from function.__version__ import __version__  # noqa: E402

OUT = ROOT / "configurations"
#: The clouds whose upjet families (``provider-<cloud>-<service>``) a package may depend on.
CLOUD_NAMES = frozenset(p.name for p in cloud_profiles())
APIS = ROOT / "apis"
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples"
PROVIDERS = ROOT / "examples" / "install" / "10-providers.yaml"
FUNCTION = ROOT / "examples" / "install" / "40-function.yaml"
FUNCTION_META = ROOT / "package" / "crossplane.yaml"
CLI = ROOT / ".bin" / "crossplane"

#: Composed kinds that are Crossplane's own (Usages), not a provider's.
CROSSPLANE_GROUPS = frozenset({"protection.crossplane.io", "apiextensions.crossplane.io"})
#: ``crossplane render``'s own documents (function results), not composed resources.
RENDER_GROUP = "render.crossplane.io"
#: The packages serving the kinds of groups outside the upjet convention.
PROVIDER_OF_GROUP = {
    "kubernetes.crossplane.io": "provider-kubernetes",
    "helm.crossplane.io": "provider-helm",
}

#: Managed kinds a module composes that no golden shows, as the cluster-scoped kind (the
#: namespaced form composes its twin): options only unit tests reach, or later passes than a
#: golden's (tests/test_configurations.py converges every module case in both forms and fails
#: naming any kind composed beyond the goldens and this table). Each is emitted by the named
#: capability's home file (its ``home``, fnplatform/library/<home>.py) on a path only that
#: module takes.
UNRENDERED: dict[str, tuple[tuple[str, str], ...]] = {
    "cluster": (
        # add_dns_zone on Azure (clouds/azure/dns.py): tests/test_cluster_azure.py
        ("network.azure.upbound.io/v1beta2", "DNSZone"),
        # add_workload_identity on Azure (clouds/azure/identity.py): tests/test_cluster_azure.py
        ("managedidentity.azure.upbound.io/v1beta1", "FederatedIdentityCredential"),
        # a private AKS cluster's private DNS zone and its link, in a later pass than the
        # azure-private golden's
        ("network.azure.upbound.io/v1beta2", "PrivateDNSZone"),
        ("network.azure.upbound.io/v1beta1", "PrivateDNSZoneVirtualNetworkLink"),
    ),
    "contact-center": (
        # add_bucket with access_logging on Azure (clouds/azure/bucket.py; only contact-center
        # asks for access logs): tests/test_contact_center.py
        ("insights.azure.upbound.io/v1beta2", "MonitorDiagnosticSetting"),
        ("operationalinsights.azure.upbound.io/v1beta2", "Workspace"),
        # add_key on GCP (clouds/gcp/key.py): tests/test_contact_center.py
        ("kms.gcp.upbound.io/v1beta2", "CryptoKey"),
        ("kms.gcp.upbound.io/v1beta2", "CryptoKeyIAMMember"),
        # add_failover_dns on GCP (clouds/gcp/failover.py): tests/test_contact_center.py
        ("dns.gcp.upbound.io/v1beta2", "RecordSet"),
        # on GCP the bucket (and its grant) and the ingress firewall come after the key, in
        # later passes than the gcp golden's
        ("storage.gcp.upbound.io/v1beta2", "Bucket"),
        ("storage.gcp.upbound.io/v1beta2", "BucketIAMMember"),
        ("compute.gcp.upbound.io/v1beta2", "Firewall"),
    ),
    "environment": (
        # add_cdn with custom domains on Azure (clouds/azure/cdn.py) and GCP (clouds/gcp/cdn.py):
        # tests/test_environment_module.py
        ("cdn.azure.upbound.io/v1beta2", "FrontdoorCustomDomain"),
        ("network.azure.upbound.io/v1beta1", "DNSCNAMERecord"),
        ("network.azure.upbound.io/v1beta1", "DNSTXTRecord"),
        ("dns.gcp.upbound.io/v1beta2", "RecordSet"),
        # spec.ci on Azure (clouds/azure/identity.py, purpose bucket-writer): the CI identity's
        # role on the asset account waits for observed ids, a later pass than the azure-ci
        # golden's; tests/test_environment_ci.py
        ("authorization.azure.upbound.io/v1beta1", "RoleAssignment"),
    ),
}

HEADER = """\
# GENERATED by tools/make_configurations.py: do not edit; regenerate with `make configurations`
# (`make lint` checks it). {what}
"""

try:  # libyaml reads the goldens several times faster
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def group_of(api_version: str) -> str:
    """The API group of ``group/version`` (empty for the core group's bare ``v1``)."""
    return make_activation_policy.group_of(api_version)


@dataclass(frozen=True)
class Package:
    """One Configuration package: a module in one form."""

    module: str
    namespaced: bool

    @property
    def name(self) -> str:
        return f"platform-{self.module}" + ("-namespaced" if self.namespaced else "")

    @property
    def form(self) -> str:
        return "v2 namespaced composites" if self.namespaced else "v1 claims"

    def _of_form(self, path: Path, under: Path) -> bool:
        return ("namespaced" in path.relative_to(under).parts) == self.namespaced

    def api_files(self) -> list[Path]:
        """The form's XRD and Composition files under ``apis/<module>/`` (kustomizations and
        the other form's files left out)."""
        under = APIS / self.module
        found = []
        for path in sorted(under.rglob("*.yaml")):
            if not self._of_form(path, under):
                continue
            kinds = {d.get("kind") for d in yaml.safe_load_all(path.read_text()) if d}
            if kinds <= {"CompositeResourceDefinition", "Composition"}:
                found.append(path)
            elif "Kustomization" not in kinds:
                msg = f"{path.relative_to(ROOT)}: neither XRD nor Composition: {sorted(kinds)}"
                raise SystemExit(msg)
        return found

    def example_files(self) -> list[Path]:
        under = EXAMPLES / self.module
        return [p for p in sorted(under.rglob("*.yaml")) if self._of_form(p, under)]

    def goldens(self) -> list[Path]:
        where = GOLDEN / self.module / ("namespaced" if self.namespaced else "")
        return sorted(where.glob("*.yaml"))

    @property
    def directory(self) -> Path:
        return OUT / self.name


def packages() -> list[Package]:
    """Every module of ``apis/`` in both forms."""
    modules = sorted(p.name for p in APIS.iterdir() if p.is_dir())
    return [Package(m, ns) for m in modules for ns in (False, True)]


@cache
def _composite_groups() -> frozenset[tuple[str, str]]:
    """``(group, kind)`` of every composite the XRDs define (both forms): never composed by a
    provider, though a module may compose one (openstack's nested composites)."""
    kinds = set()
    for path in APIS.rglob("definition.yaml"):
        xrd = yaml.safe_load(path.read_text())
        kinds.add((xrd["spec"]["group"], xrd["spec"]["names"]["kind"]))
    return frozenset(kinds)


def is_provider_kind(doc: dict[str, Any]) -> bool:
    """Whether a rendered document is a resource a provider serves: not a composite, a
    function result or Crossplane's own (a Usage)."""
    group = group_of(str(doc.get("apiVersion", "")))
    if group in CROSSPLANE_GROUPS or group == RENDER_GROUP:
        return False
    return (group, str(doc.get("kind", ""))) not in _composite_groups()


def is_managed(doc: dict[str, Any]) -> bool:
    """Whether a provider's kind is a managed resource (an MRD): one with ``spec.forProvider``
    or declared managed; never a ProviderConfig (a safe-start provider keeps those as CRDs)."""
    if str(doc.get("kind", "")).endswith("ProviderConfig"):
        return False
    spec = doc.get("spec")
    return (isinstance(spec, dict) and "forProvider" in spec) or kind_of(doc).managed


@cache
def _golden_docs(path: Path) -> tuple[tuple[str, str, bool], ...]:
    """``(apiVersion, kind, managed)`` of each provider kind a golden composes."""
    out = []
    for doc in yaml.load_all(path.read_text(), Loader=_Loader):
        if isinstance(doc, dict) and is_provider_kind(doc):
            out.append((str(doc["apiVersion"]), str(doc["kind"]), is_managed(doc)))
    return tuple(out)


def _registry() -> dict[tuple[str, str], Kind]:
    from fnplatform.composers import composers

    composers()  # imports every cloud and composer: they declare their kinds on import
    return {(k.api_version, k.kind): k for k in registered()}


def _unrendered(package: Package) -> set[tuple[str, str]]:
    """:data:`UNRENDERED` of the package's module, in the package's form."""
    kinds = _registry()
    out = set()
    for key in UNRENDERED.get(package.module, ()):
        kind = kinds.get(key)
        if kind is None:
            msg = f"UNRENDERED names {key}, which no module declares"
            raise SystemExit(msg)
        if package.namespaced:
            twin = namespaced_twin(kind)
            if not isinstance(twin, Kind):
                msg = f"{key} has no namespaced twin: {twin}"
                raise SystemExit(msg)
            kind = twin
        out.add((kind.api_version, kind.kind))
    return out


def composed(package: Package) -> dict[tuple[str, str], bool]:
    """``(apiVersion, kind) -> managed`` of every provider kind the package's module composes
    in its form: its goldens', and its :data:`UNRENDERED` kinds."""
    found: dict[tuple[str, str], bool] = {}
    for path in package.goldens():
        for api_version, kind, managed in _golden_docs(path):
            found[(api_version, kind)] = managed
    for key in _unrendered(package):
        found[key] = True
    return found


def provider_of(group: str) -> str:
    """The provider package serving an API group: ``<service>.<cloud>.upbound.io`` is the
    upjet family member ``provider-<cloud>-<service>``, ``<cloud>.upbound.io`` (ProviderConfigs,
    Azure's ResourceGroup) the family's own ``provider-family-<cloud>``; the ``.m.`` (namespaced)
    groups are served by the same package."""
    plain = group.replace(".m.", ".")
    if plain in PROVIDER_OF_GROUP:
        return PROVIDER_OF_GROUP[plain]
    parts = plain.split(".")
    if parts[-2:] == ["upbound", "io"] and len(parts) == 4:
        return f"provider-{parts[1]}-{parts[0]}"
    if parts[-2:] == ["upbound", "io"] and len(parts) == 3:
        return f"provider-family-{parts[0]}"
    msg = f"no provider package known for the API group {group} (tools/make_configurations.py)"
    raise SystemExit(msg)


def _split(reference: str) -> tuple[str, str]:
    repository, _, tag = reference.rpartition(":")
    return repository, tag


@cache
def pinned_providers() -> dict[str, tuple[str, str]]:
    """``name -> (repository, tag)`` of every provider package ``10-providers.yaml`` installs,
    and of each upjet family's own provider at its members' release (a member pulls it in)."""
    pins: dict[str, tuple[str, str]] = {}
    for doc in yaml.safe_load_all(PROVIDERS.read_text()):
        if doc and doc.get("kind") == "Provider":
            repository, tag = _split(doc["spec"]["package"])
            pins[repository.rsplit("/", 1)[1]] = (repository, tag)
    families: dict[str, set[tuple[str, str]]] = {}
    for name, (repository, tag) in pins.items():
        parts = name.split("-")
        if len(parts) == 3 and parts[1] in CLOUD_NAMES:
            family = f"provider-family-{parts[1]}"
            families.setdefault(family, set()).add((repository.rsplit("/", 1)[0], tag))
    for family, releases in families.items():
        if len(releases) != 1:
            msg = f"{PROVIDERS.name}: the {family} members pin different releases: {releases}"
            raise SystemExit(msg)
        ((prefix, tag),) = releases
        pins.setdefault(family, (f"{prefix}/{family}", tag))
    return pins


def function_package() -> tuple[str, str]:
    """The function's (repository, tag), as ``examples/install/40-function.yaml`` installs it."""
    for doc in yaml.safe_load_all(FUNCTION.read_text()):
        if doc and doc.get("kind") == "Function":
            return _split(doc["spec"]["package"])
    msg = f"no Function in {FUNCTION}"
    raise SystemExit(msg)


#: The function package's name in a registry: ``<registry>/function-platform``.
FUNCTION_NAME = "function-platform"


def function_dependency(registry: str | None = None) -> tuple[str, str]:
    """The function's (repository, release) a Configuration depends on: the repository of
    ``examples/install/40-function.yaml`` (or ``<registry>/function-platform`` for a release
    built for that registry) at ``v`` + ``function/__version__.py``, the one version."""
    repository = f"{registry}/{FUNCTION_NAME}" if registry else function_package()[0]
    return repository, f"v{__version__}"


def providers(package: Package) -> list[str]:
    """The provider packages the package's module composes kinds of, sorted."""
    return sorted({provider_of(group_of(av)) for av, _ in composed(package)})


def _dependency(kind: str, repository: str, tag: str) -> dict[str, str]:
    return {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": kind,
        "package": repository,
        "version": f"^{tag}",
    }


def meta(package: Package, registry: str | None = None) -> dict[str, Any]:
    """The package's ``crossplane.yaml`` (depending on the function in ``registry`` when
    given: a release's)."""
    pins = pinned_providers()
    unpinned = [p for p in providers(package) if p not in pins]
    if unpinned:
        msg = (
            f"{package.name} composes kinds of {', '.join(unpinned)}, which "
            f"{PROVIDERS.relative_to(ROOT)} does not install: add it there"
        )
        raise SystemExit(msg)
    function_meta = yaml.safe_load(FUNCTION_META.read_text())
    apis = ", ".join(
        sorted(
            yaml.safe_load(p.read_text())["spec"]["names"]["kind"]
            for p in package.api_files()
            if p.name == "definition.yaml"
        )
    )
    return {
        "apiVersion": "meta.pkg.crossplane.io/v1",
        "kind": "Configuration",
        "metadata": {
            "name": package.name,
            "annotations": {
                "meta.crossplane.io/maintainer": "Platform team",
                "meta.crossplane.io/source": "function-platform",
                "meta.crossplane.io/description": (
                    f"The {package.module} module of function-platform as {package.form}: {apis}."
                ),
                "meta.crossplane.io/readme": (
                    f"Installs the {package.module} module's XRDs and Compositions "
                    f"({package.form}) and the ManagedResourceActivationPolicy "
                    f"{package.name} activating what it composes. Install one form of a "
                    "module, never both: they define the same kinds."
                ),
            },
        },
        "spec": {
            "crossplane": {"version": function_meta["spec"]["crossplane"]["version"]},
            "dependsOn": [
                _dependency("Function", *function_dependency(registry)),
                *(_dependency("Provider", *pins[p]) for p in providers(package)),
            ],
        },
    }


def mrd_names(package: Package) -> list[str]:
    """The MRDs (``<plural>.<group>``) of every managed kind the package's module composes."""
    keys = {(group_of(av), kind) for (av, kind), managed in composed(package).items() if managed}
    plurals = make_activation_policy.crd_plurals(keys)
    return sorted({f"{plurals[key]}.{key[0]}" for key in keys})


def policy(package: Package) -> dict[str, Any]:
    """The package's ManagedResourceActivationPolicy."""
    return {
        "apiVersion": "apiextensions.crossplane.io/v1alpha1",
        "kind": "ManagedResourceActivationPolicy",
        "metadata": {"name": package.name},
        "spec": {"activate": mrd_names(package)},
    }


def _dump(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=100)


def files(package: Package) -> dict[Path, str]:
    """The generated files of one package and their content."""
    where = f"the goldens of tests/golden/{package.module}/" + (
        "namespaced/" if package.namespaced else ""
    )
    return {
        package.directory / "crossplane.yaml": HEADER.format(
            what=f"The {package.module} module's Configuration ({package.form}): dependsOn the "
            f"function and the providers\n# whose kinds {where} compose, at the "
            "releases examples/install pins."
        )
        + _dump(meta(package)),
        package.directory / "activation-policy.yaml": HEADER.format(
            what=f"The managed resources the {package.module} module composes "
            f"({package.form}; {where}),\n# activated when the package is installed "
            '(README, "Installing one module").'
        )
        + _dump(policy(package)),
    }


def all_files() -> dict[Path, str]:
    out: dict[Path, str] = {}
    for package in packages():
        out.update(files(package))
    return out


def stage(package: Package, into: Path, registry: str | None = None) -> tuple[Path, Path]:
    """The package root and examples root of ``package``, assembled under ``into`` (its
    metadata depending on the function in ``registry`` when given)."""
    root, examples = into / "package", into / "examples"
    root.mkdir(parents=True)
    examples.mkdir(parents=True)
    for name in ("crossplane.yaml", "activation-policy.yaml"):
        shutil.copy(package.directory / name, root / name)
    if registry:
        (root / "crossplane.yaml").write_text(_dump(meta(package, registry)))
    for path in package.api_files():
        target = root / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    for path in package.example_files():
        target = examples / path.relative_to(EXAMPLES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return root, examples


def build(
    out: Path, only: Iterable[str] = (), cli: Path = CLI, registry: str | None = None
) -> Iterator[Path]:
    """Build ``out/<package>.xpkg`` for every package (or those named), yielding each file;
    with ``registry``, a release's: ``out/<package>-v<version>.xpkg`` depending on
    ``<registry>/function-platform``."""
    wanted = set(only)
    known = {p.name for p in packages()}
    if wanted - known:
        msg = f"no such package: {', '.join(sorted(wanted - known))} (known: {sorted(known)})"
        raise SystemExit(msg)
    out.mkdir(parents=True, exist_ok=True)
    for package in packages():
        if wanted and package.name not in wanted:
            continue
        with tempfile.TemporaryDirectory(prefix=f"{package.name}-") as tmp:
            root, examples = stage(package, Path(tmp), registry)
            name = f"{package.name}-v{__version__}" if registry else package.name
            target = (out / f"{name}.xpkg").resolve()
            result = subprocess.run(
                [
                    str(cli),
                    "xpkg",
                    "build",
                    f"--package-root={root}",
                    f"--examples-root={examples}",
                    f"--package-file={target}",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                msg = f"crossplane xpkg build {package.name} failed:\n{result.stderr}"
                raise SystemExit(msg)
        yield target


def stale() -> list[str]:
    """Generated files that differ from what the sources give, and stray package folders."""
    wanted = all_files()
    problems = [
        str(p.relative_to(ROOT))
        for p, text in wanted.items()
        if not p.exists() or p.read_text() != text
    ]
    present = set(OUT.rglob("*")) if OUT.exists() else set()
    problems += [
        str(p.relative_to(ROOT)) + " (not generated)"
        for p in sorted(present)
        if p.is_file() and p not in wanted
    ]
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when configurations/ is stale")
    parser.add_argument("--build", type=Path, metavar="DIR", help="build DIR/<package>.xpkg")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PACKAGE",
        help="with --build: only this package (repeatable)",
    )
    parser.add_argument(
        "--registry",
        metavar="REGISTRY",
        help="with --build: a release's packages, depending on "
        "REGISTRY/function-platform (make release)",
    )
    parser.add_argument("--crossplane", type=Path, default=CLI, help="the crossplane CLI")
    args = parser.parse_args(argv)
    problems = stale()
    if args.check or args.build:
        if problems:
            print("out of date: " + ", ".join(problems) + " (run make configurations)")
            return 1
        if args.build:
            for path in build(args.build, args.only, args.crossplane, args.registry):
                print(f"make_configurations: {path}")
        return 0
    for path, text in all_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
