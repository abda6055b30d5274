"""The cluster's Helm releases: which charts, where from, and their values templates.

Values are Jinja2 templates under ``values/`` rendered with the environment, so a platform
team tunes a chart from an EnvironmentConfig without touching the function.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Chart:
    """A chart the cluster module installs."""

    name: str
    repository: str
    version: str
    namespace: str


CHARTS: tuple[Chart, ...] = (
    Chart("cert-manager", "https://charts.jetstack.io", "v1.21.1", "cert-manager"),
    Chart("ingress-nginx", "https://kubernetes.github.io/ingress-nginx", "4.13.3", "ingress-nginx"),
    Chart(
        "kube-prometheus-stack",
        "https://prometheus-community.github.io/helm-charts",
        "79.5.0",
        "monitoring",
    ),
)


def chart_release(chart: str) -> str:
    """The composition name of ``chart``'s release."""
    return f"release-{chart}"


@functools.cache
def values_template(chart: str) -> str:
    """The Jinja2 values template of ``chart``."""
    return (resources.files(__package__) / "values" / f"{chart}.yaml.j2").read_text()
