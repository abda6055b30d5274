"""Command line: the SDK's standard flags, plus message-size limits and the process pool."""

from __future__ import annotations

import asyncio
import sys

import click
from crossplane.function import logging

from function.server import MIB, ServerConfig, StartupError, serve


@click.command()
@click.option("--debug", "-d", is_flag=True, help="Emit debug logs.")
@click.option("--address", default="0.0.0.0:9443", show_default=True, help="Address to listen on.")
@click.option(
    "--tls-certs-dir",
    envvar="TLS_SERVER_CERTS_DIR",
    help="Directory with tls.crt, tls.key and ca.crt for mTLS (as Crossplane mounts them).",
)
@click.option("--insecure", is_flag=True, help="Serve without TLS (development only).")
@click.option(
    "--max-recv-message-size", default=4, show_default=True, type=click.IntRange(1),
    help="Largest request accepted, in MiB.",
)
@click.option(
    "--max-send-message-size", default=4, show_default=True, type=click.IntRange(1),
    help="Largest response sent, in MiB; responses near it carry a warning.",
)
@click.option(
    "--grace-period", default=20.0, show_default=True, type=click.FloatRange(0),
    help="Seconds in-flight requests get to finish after SIGTERM.",
)
@click.option(
    "--processes", default=0, show_default=True, type=click.IntRange(0),
    help="Compose in this many worker processes (0: threads of the server process).",
)
def cli(  # noqa: PLR0913 - one parameter per flag
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int,
    grace_period: float,
    processes: int,
) -> None:
    """Serve function-platform, a Crossplane composition function."""
    logging.configure(logging.Level.DEBUG if debug else logging.Level.INFO)
    config = ServerConfig(
        address=address,
        insecure=insecure,
        tls_certs_dir=tls_certs_dir,
        max_recv_message_size=max_recv_message_size * MIB,
        max_send_message_size=max_send_message_size * MIB,
        grace_period=grace_period,
        processes=processes,
    )
    try:
        asyncio.run(serve(config))
    except StartupError as err:
        click.echo(f"function-platform: {err}", err=True)
        sys.exit(1)


def main() -> None:
    """Console-script entry point."""
    cli()
