"""Layer 2: the cloud modules. Importing this package registers every cloud's builders.

A cloud module registers, with :func:`fnplatform.library.registry.provides`, a builder per
capability it supports. A resource builder has the signature
``(comp, name, spec, *, uses, template) -> None`` and emits its main resource as ``name``
(plus helpers named ``f"{name}-<part>"``) through ``comp.emit``. Value capabilities
(``cluster_credentials``, ``internal_load_balancer``, ``identity_annotations``,
``identity_pod_labels``) return plain values. Extras registered with
:func:`fnplatform.library.registry.extra` run after the builder, as ``(comp, name, spec)``.
"""

from fnplatform.clouds import aws, azure, gcp

__all__ = ["aws", "azure", "gcp"]
