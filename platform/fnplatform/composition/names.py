"""Names: what a composed resource is called in the cluster and in the cloud.

A composed resource's ``metadata.name`` is derived from the composite's name and its own
(:meth:`Naming.resource_name`, a DNS label), so references never wait for observed IDs.
Cloud-global names (buckets, key rings, storage accounts) derive from
:attr:`Naming.global_name_base`; a resource that exists keeps the name it has (its external
name, or an imported one), whatever a derivation would say today: a new name is a new resource.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fnplatform.composition.state import UID_SUFFIX_LENGTH, CompositionState
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.naming import dns_label


class Naming(CompositionState):
    """Resource names, external names and the name rules every builder shares."""

    def resource_name(self, name: str) -> str:
        """The deterministic ``metadata.name`` of composed resource ``name``."""
        return dns_label(self.name, name)

    def ref(self, name: str) -> dict[str, str]:
        """A provider ``*Ref`` to composed resource ``name``, resolved by the provider, which
        refuses a reference to nothing (rule REFERENCES_RESOLVE,
        platform/providersim/simulation.py).

        Its emitted ``metadata.name`` when already desired (a caller may have named it),
        else the deterministic name it will get, so referencing never waits on observed IDs.
        """
        emitted = self.desired.get(name)
        if emitted is not None:
            return {"name": str(emitted.body["metadata"]["name"])}
        return {"name": self.resource_name(name)}

    def cloud_name(self, name: str, default: str) -> str:
        """The name the cloud knows composed resource ``name`` by: the external name it is
        imported as (``spec.parameters.import``, what :func:`~fnplatform.importing.apply_import`
        annotates), else ``default``, the one its builder gives it (a spec's name, a derived
        one).

        One rule for every value that names a resource before reading it back (an EKS
        cluster's name in IAM policies, a storage account's, a service account's email), so
        none of them names the composed resource while the import adopts another.
        """
        return self.import_spec.external_name(name) or default

    def global_name(
        self, name: str, derive: Callable[[str], str], *, in_metadata: bool = True
    ) -> str:
        """The cloud-global name of composed resource ``name`` (a bucket, a key ring, a storage
        account): the one the existing resource has, else ``derive`` of
        :attr:`global_name_base`.

        A resource that exists is never renamed (a new name is a new resource, and some names
        outlive theirs). ``in_metadata``: the kind's ``metadata.name`` is the cloud name
        (:meth:`kept_metadata_name`); else its external name (:meth:`observed_external_name`).
        """
        kept = self.kept_metadata_name(name) if in_metadata else self.observed_external_name(name)
        return kept or derive(self.global_name_base)

    @property
    def global_name_base(self) -> str:
        """What cloud-global names (S3 and GCS buckets, KMS key rings, Azure storage accounts
        and vaults) derive from: names unique across a whole cloud, some outliving their
        resource (a kept bucket, a KMS ring that can never be deleted, a soft-deleted vault).

        A cluster-scoped composite's name carries Crossplane's random suffix (a claim
        ``orders`` gets ``orders-x7k2p``): the name itself, so a re-created claim gets new
        names. A namespaced composite has the user's own name, which a re-created composite
        reuses: ``<name>-<8 hex of its uid>`` (:attr:`uid_suffix`), so it never meets what its
        predecessor left. Name functions prefer :meth:`observed_external_name`: a resource that
        exists keeps its name whatever this says.
        """
        return f"{self.name}-{self.uid_suffix}" if self.namespaced else self.name

    @property
    def uid_suffix(self) -> str:
        """8 hex digits of this composite's uid (dashes dropped): one composite, not its name.

        A composite without a uid (a render of a manifest never applied) gets 8 hex digits of
        the SHA-256 of ``<namespace>/<name>`` instead, so the output stays deterministic.
        """
        return self.uid_hex(f"{self.namespace or ''}/{self.name}")

    def uid_hex(self, fallback: str) -> str:
        """8 hex digits of the composite's uid (dashes dropped), else of the SHA-256 of
        ``fallback`` when it has no uid.

        :attr:`uid_suffix` is this with ``<namespace>/<name>``; a composer whose names were
        seeded differently before (the environment: its name alone) passes its own fallback
        so names it already gave stay the same.
        """
        uid = str((self.composite.get("metadata") or {}).get("uid") or "").replace("-", "")
        seed = uid or hashlib.sha256(fallback.encode()).hexdigest()
        return seed[:UID_SUFFIX_LENGTH]

    def observed_external_name(self, name: str) -> str | None:
        """The cloud name of observed composed resource ``name``: its
        ``crossplane.io/external-name`` annotation, else its ``metadata.name``; None when not
        observed.

        Name functions of stateful resources return it before deriving one, so a resource that
        exists is never renamed (which would replace it) when the derivation changes.
        """
        if name not in self.observed:
            return None
        # Field reads, not the body: the body changes with every write (resourceVersion), these
        # only when the name does (fnplatform.engine.reuse).
        external = self.observed.field(name, f"metadata.annotations[{EXTERNAL_NAME}]")
        value = (
            external
            if isinstance(external, str) and external
            else self.observed.field(name, "metadata.name")
        )
        return value if isinstance(value, str) and value else None

    def kept_metadata_name(self, name: str) -> str | None:
        """For kinds whose ``metadata.name`` is the cloud name (S3 and GCS buckets, KMS key
        rings): the name existing composed resource ``name`` keeps, None when not observed.

        Its :meth:`observed_external_name`, except for an imported one: there the import's
        annotation names the adopted resource and ``metadata.name`` stays the composed one.
        """
        if self.import_spec.adopts(name):
            value = self.observed_value(name, "metadata.name")
            return value if isinstance(value, str) and value else None
        return self.observed_external_name(name)
