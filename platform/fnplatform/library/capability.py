"""Capabilities as objects: what a composer asks for, and where each cloud answers it.

Three shapes, each an object a composer calls and a cloud module registers on:

* :class:`Capability` composes resources: ``add_bucket(comp, "recordings", BucketSpec(...))``;
  a cloud registers ``@add_bucket.on("aws")`` and, for what only it needs after the builder,
  ``@add_cluster.extra("aws")``.
* :class:`Value` computes something cloud-specific a composer needs (a name, an address,
  annotations): ``bucket_address(comp, "recordings", None)``, registered with
  ``@bucket_address.on("gcp")``. It is typed by its arguments and result,
  ``Value[[str, str | None], BucketAddress]``, so mypy checks both the call and every cloud's
  answer.
* :class:`Flag` says whether a cloud supports something a composer can do without
  (``bucket_replication("azure")`` is False), declared with ``bucket_replication.on("aws")``.

Nothing is named by a string at a call or registration site: a misspelt capability is an
``AttributeError``/``ImportError`` at import, "find references" on the object lists every
cloud's implementation, and no registry module imports the clouds (they are loaded once, by
:mod:`fnplatform.clouds`, when the function starts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

from fnplatform.cloud import CLOUDS, Cloud
from fnplatform.errors import InputError, SpecError

if TYPE_CHECKING:
    from fnplatform.composition import Composition

#: Kubernetes annotations or labels, as a composer puts them on an object.
Labels = dict[str, str]
#: A Helm chart's values, or a ProviderConfig's ``identity`` block.
Document = dict[str, Any]

SpecT = TypeVar("SpecT")
SpecT_contra = TypeVar("SpecT_contra", contravariant=True)
P = ParamSpec("P")
R = TypeVar("R")


class Builder(Protocol[SpecT_contra]):
    """A cloud's builder (or extra) of a capability: emits through ``comp.emit``."""

    def __call__(self, comp: Composition, name: str, spec: SpecT_contra, /) -> None: ...


BuilderT = TypeVar("BuilderT", bound=Callable[..., None])
#: A cloud's answer to a value: the composition, then the value's own arguments.
Answer = Callable[Concatenate["Composition", P], R]


def _unsupported(
    name: str, cloud: str | None, field_path: str, clouds: Iterable[str]
) -> InputError:
    """The error on the user's cloud field when the placed cloud cannot provide ``name``."""
    supported = ", ".join(sorted(clouds)) or "none"
    return InputError(
        field_path, f"{cloud or 'unset'} cannot provide {name}; supported clouds: {supported}"
    )


ImplT = TypeVar("ImplT")


@dataclass(frozen=True, eq=False)
class PerCloud(Generic[ImplT]):
    """What every capability shape shares: a name, its home, and one implementation per cloud.

    ``home`` is the file every cloud implements it in, ``clouds/<cloud>/<home>.py``: the
    layout is a property of the capability, declared with it (tests/capabilities/test_layout.py
    holds every cloud to it), so "where does GCP build buckets?" is answered by the object.
    """

    name: str
    doc: str = ""
    _by_cloud: dict[str, ImplT] = field(default_factory=dict, repr=False)
    home: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not self.home:
            raise ValueError(f"{self.name}: say its home, the file clouds/<cloud>/<home>.py")

    def module(self, cloud: str) -> str:
        """The module ``cloud`` implements it in: ``fnplatform.clouds.<cloud>.<home>``."""
        return f"fnplatform.clouds.{cloud}.{self.home}"

    def _provide(self, cloud: Cloud, implementation: ImplT) -> None:
        if cloud not in CLOUDS:  # a typo would register on a cloud no composite is placed on
            raise ValueError(f"{self.name}: unknown cloud {cloud!r}; one of {', '.join(CLOUDS)}")
        if cloud in self._by_cloud:
            raise ValueError(f"{cloud} already provides {self.name}")
        self._by_cloud[cloud] = implementation

    def clouds(self) -> list[str]:
        """The clouds that provide it, sorted."""
        return sorted(self._by_cloud)

    def provided_on(self, cloud: str | None) -> bool:
        """Whether ``cloud`` provides it: a composer can go on without it."""
        return (cloud or "") in self._by_cloud

    def _on_placed(self, comp: Composition, cloud: str | None) -> tuple[str, ImplT]:
        """``cloud`` (default: the composite's) and its implementation, or an InputError on
        the user's cloud field listing the clouds that have one."""
        target = cloud or comp.cloud or ""
        found = self._by_cloud.get(target)
        if found is None:
            raise _unsupported(self.name, target, comp.placement.cloud.field, self._by_cloud)
        return target, found


@dataclass(frozen=True, eq=False)
class Capability(PerCloud[Builder[SpecT]]):
    """An agnostic call composing resources: ``add_network = Capability[NetworkSpec]("network")``.

    Every call has one shape, ``add_<capability>(comp, name, spec, *, uses=(), fields=None,
    cloud=None)``:

    * ``spec`` is a frozen dataclass in the capability's module (``library/<home>.py``) that
      knows no cloud;
    * ``uses`` is attached to the main resource ``name`` after the builder ran (held back
      until those exist, Usages order deletion), so builders don't thread it through;
    * ``fields`` maps spec attributes to the user's field paths: a builder's
      :class:`~fnplatform.errors.SpecError` about ``cidr`` becomes an InputError on, say,
      ``spec.network.cidr``;
    * ``cloud`` overrides the composite's placement for one call (an SQS queue for an actor
      whose composite has no cloud of its own).
    """

    _extras: dict[str, list[Builder[SpecT]]] = field(default_factory=dict, repr=False)

    def on(self, cloud: Cloud) -> Callable[[BuilderT], BuilderT]:
        """Register the decorated function as ``cloud``'s builder of this capability."""

        def register(build: BuilderT) -> BuilderT:
            self._provide(cloud, build)
            return build

        return register

    def extra(self, cloud: Cloud) -> Callable[[BuilderT], BuilderT]:
        """Register the decorated function to run after ``cloud``'s builder (layer 3)."""

        def register(build: BuilderT) -> BuilderT:
            self._extras.setdefault(cloud, []).append(build)
            return build

        return register

    def builder(self, cloud: str | None) -> Builder[SpecT] | None:
        """``cloud``'s builder, for tests and tools that look implementations up."""
        return self._by_cloud.get(cloud or "")

    def extras(self, cloud: str | None) -> list[Builder[SpecT]]:
        """``cloud``'s extras, in registration order."""
        return list(self._extras.get(cloud or "", ()))

    def __call__(
        self,
        comp: Composition,
        name: str,
        spec: SpecT,
        *,
        uses: Iterable[str] = (),
        fields: Mapping[str, str] | None = None,
        cloud: str | None = None,
    ) -> None:
        target, build = self._on_placed(comp, cloud)
        try:
            build(comp, name, spec)
            for extra in self._extras.get(target, ()):
                extra(comp, name, spec)
        except SpecError as err:
            field_path = (fields or {}).get(err.attribute, f"{self.name}.{err.attribute}")
            raise InputError(field_path, err.reason) from None
        if uses:
            emitted = comp.desired.get(name)
            if emitted is not None:  # the pass's own record: updated in place, not copied
                emitted.uses = (*emitted.uses, *uses)


@dataclass(frozen=True, eq=False)
class Value(PerCloud[Answer[P, R]], Generic[P, R]):
    """A cloud-specific value a composer needs:
    ``Value[[str, str | None], BucketAddress]("bucket_address")``.

    Called as ``bucket_address(comp, "recordings", None)`` (the composite's cloud) or, for another
    cloud or to map a cloud's :class:`~fnplatform.errors.SpecError` to the user's field,
    ``queue_name.at(cloud="aws", fields={"name": "metadata.name"})(comp, ...)``.
    """

    def on(self, cloud: Cloud) -> Callable[[Answer[P, R]], Answer[P, R]]:
        """Register the decorated function as ``cloud``'s answer."""

        def register(answer: Answer[P, R]) -> Answer[P, R]:
            self._provide(cloud, answer)
            return answer

        return register

    def answer(self, cloud: str | None) -> Answer[P, R] | None:
        """``cloud``'s implementation, for tests and tools that look implementations up."""
        return self._by_cloud.get(cloud or "")

    def at(
        self, *, cloud: str | None = None, fields: Mapping[str, str] | None = None
    ) -> Answer[P, R]:
        """This value on ``cloud`` (default: the composite's), SpecErrors mapped by ``fields``."""

        def value_of(comp: Composition, /, *args: P.args, **kwargs: P.kwargs) -> R:
            _, answer = self._on_placed(comp, cloud)
            try:
                return answer(comp, *args, **kwargs)
            except SpecError as err:
                field_path = (fields or {}).get(err.attribute, f"{self.name}.{err.attribute}")
                raise InputError(field_path, err.reason) from None

        return value_of

    def __call__(self, comp: Composition, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.at()(comp, *args, **kwargs)


@dataclass(frozen=True, eq=False)
class Flag(PerCloud[bool]):
    """Whether a cloud supports something optional: ``bucket_replication("aws")``."""

    def on(self, cloud: Cloud) -> None:
        """Declare that ``cloud`` supports it (in the cloud module that implements it)."""
        self._provide(cloud, True)

    def __call__(self, cloud: str | None) -> bool:
        return self.provided_on(cloud)
