"""Command line: the SDK's standard flags, plus message-size limits and the process pool."""

from __future__ import annotations

import asyncio
import sys

import click
from fnplatform.api.step_input import PhaseTTL, duration_seconds

from function.__version__ import __version__
from function.metrics import parse_address
from function.requestlog import LOG_FORMATS, configure
from function.server import MIB, ServerConfig, StartupError, serve


class Size(click.ParamType):
    """A message size: a bare number is MiB (the SDK's convention), or ``<n>B``/``KiB``/``MiB``.

    Bytes and KiB let tests and benchmarks exercise the size warning and the over-limit result
    without composing megabytes.
    """

    name = "size"
    UNITS = (("MiB", MIB), ("KiB", 1024), ("B", 1))

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        """``4`` -> 4 MiB in bytes; ``512KiB`` -> 524288; ``100B`` -> 100."""
        if isinstance(value, int):
            return value
        text = str(value).strip()
        multiplier = MIB
        for suffix, factor in self.UNITS:
            if text.endswith(suffix):
                text, multiplier = text.removesuffix(suffix), factor
                break
        try:
            size = int(text) * multiplier
        except ValueError:
            self.fail(f"{value!r} is not a size such as 4, 512KiB or 100000B", param, ctx)
        if size < 1:
            self.fail(f"{value!r} must be positive", param, ctx)
        return size


class Duration(click.ParamType):
    """A duration as the step input writes one (``10s``, ``5m``, ``1m30s``), in seconds."""

    name = "duration"

    def __init__(self, *, allow_zero: bool = False) -> None:
        self.allow_zero = allow_zero

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        """``5m`` -> 300.0."""
        if isinstance(value, float):
            return value
        try:
            seconds = duration_seconds(str(value).strip())
        except ValueError as err:
            self.fail(f"{value!r} {err}", param, ctx)
        if seconds < 0 or (seconds == 0 and not self.allow_zero):
            self.fail(f"{value!r} must be longer than 0s", param, ctx)
        return seconds


class Address(click.ParamType):
    """``host:port``, ``:port`` or ``[ipv6]:port``; empty turns the endpoint off."""

    name = "address"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        """The address unchanged once it parses."""
        text = str(value).strip()
        if text:
            try:
                parse_address(text)
            except ValueError as err:
                self.fail(str(err), param, ctx)
        return text


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="function-platform")
@click.option(
    "--debug",
    "-d",
    is_flag=True,
    help="Debug logs, with one line per request: composite, module, duration, resource and "
    "result counts (never values).",
)
@click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    default="auto",
    show_default=True,
    help="json: JSON lines; console: for people; auto: console with --debug, else json.",
)
@click.option("--address", default="0.0.0.0:9443", show_default=True, help="Address to listen on.")
@click.option(
    "--tls-certs-dir",
    envvar="TLS_SERVER_CERTS_DIR",
    show_envvar=True,
    help="Directory with tls.crt, tls.key and ca.crt for mTLS. Crossplane mounts them and sets "
    "TLS_SERVER_CERTS_DIR in the function's pod.",
)
@click.option("--insecure", is_flag=True, help="Serve without TLS (development only).")
@click.option(
    "--max-recv-message-size",
    default="4",
    show_default=True,
    type=Size(),
    help="Largest request accepted: MiB, or with a unit (512KiB, 100000B).",
)
@click.option(
    "--max-send-message-size",
    default="4",
    show_default=True,
    type=Size(),
    help="Largest response sent: MiB, or with a unit; responses near it carry a warning. "
    "Crossplane v2.4 accepts at most 4 MiB.",
)
@click.option(
    "--grace-period",
    default=20.0,
    show_default=True,
    type=click.FloatRange(0),
    help="Seconds in-flight requests get to finish after SIGTERM.",
)
@click.option(
    "--max-connection-age",
    default="30s",
    show_default=True,
    type=Duration(allow_zero=True),
    help="Close each client connection (GOAWAY) after about this long, so Crossplane "
    "reconnects and spreads calls over replicas added since; 0s: never.",
)
@click.option(
    "--max-connection-age-grace",
    default="2m",
    show_default=True,
    type=Duration(allow_zero=True),
    help="How long calls in flight on an aged connection get to finish before it is closed.",
)
@click.option(
    "--processes",
    default=0,
    show_default=True,
    type=click.IntRange(0),
    help="Compose in this many worker processes (0: threads of the server process).",
)
@click.option(
    "--switch-interval-ms",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0.05, 100),
    help="How often composing threads hand over the GIL; shorter keeps small requests fast "
    "while a large one composes (see bench/results.md).",
)
@click.option(
    "--response-cache-mib",
    default=64,
    show_default=True,
    type=click.IntRange(0),
    help="Reuse the answer to a request whose content (all but its tag) was answered before, "
    "within this many MiB (least recently used first); 0 composes every request.",
)
@click.option(
    "--reuse-passes/--no-reuse-passes",
    default=True,
    show_default=True,
    help="Reuse a composite's last pass while every observed field it read is unchanged "
    "(a new resourceVersion, a field nothing reads); within the memos' share of "
    "--response-cache-mib. --no-reuse-passes composes every pass from scratch.",
)
@click.option(
    "--metrics-address",
    default=":8080",
    show_default=True,
    type=Address(),
    help="Serve Prometheus metrics at this address (host:port, :port); empty: off.",
)
@click.option(
    "--ttl-waiting",
    default="60s",
    show_default=True,
    type=Duration(),
    help="Response TTL while the function holds resources back or they are not Ready, for "
    "step inputs that set no ttl: Crossplane calls again this soon.",
)
@click.option(
    "--ttl-ready",
    default="5m",
    show_default=True,
    type=Duration(),
    help="Response TTL once everything is composed and Ready, for step inputs that set no ttl.",
)
def cli(  # noqa: PLR0917 - one parameter per flag
    debug: bool,
    log_format: str,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int,
    grace_period: float,
    max_connection_age: float,
    max_connection_age_grace: float,
    processes: int,
    switch_interval_ms: float,
    response_cache_mib: int,
    reuse_passes: bool,
    metrics_address: str,
    ttl_waiting: float,
    ttl_ready: float,
) -> None:
    """Serve function-platform, a Crossplane composition function."""
    configure(debug, log_format)
    config = ServerConfig(
        address=address,
        insecure=insecure,
        tls_certs_dir=tls_certs_dir,
        max_recv_message_size=max_recv_message_size,
        max_send_message_size=max_send_message_size,
        grace_period=grace_period,
        max_connection_age=max_connection_age,
        max_connection_age_grace=max_connection_age_grace,
        processes=processes,
        switch_interval_ms=switch_interval_ms,
        log_requests=debug,
        response_cache_mib=response_cache_mib,
        reuse_passes=reuse_passes,
        ttl=PhaseTTL(waiting=ttl_waiting, ready=ttl_ready),
        metrics_address=metrics_address,
    )
    try:
        asyncio.run(serve(config))
    except StartupError as err:
        click.echo(f"function-platform: {err}", err=True)
        sys.exit(1)


def main() -> None:
    """Console-script entry point."""
    cli()
