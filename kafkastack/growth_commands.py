"""`kafkastack rebalance` and `kafkastack drain`: move replicas onto new brokers, or off
brokers about to be removed (docs/provisioning.md, "Growth"); `kafkastack remove-voters`: take
KRaft voters the stack no longer declares out of the quorum before they are deleted."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from kafkastack.provision_commands import STACKS
from kafkastack.sizing_commands import fail
from spark_sizing.units import BYTES_PER_MB

Bootstrap = Annotated[str, typer.Option(help="host:port of the brokers' CLIENT listener")]
ClientConfig = Annotated[
    Path | None,
    typer.Option(
        help="key=value file of librdkafka login settings (security.protocol, sasl.mechanism, "
        "sasl.username, sasl.password, ssl.ca.location, ssl.endpoint.identification.algorithm); "
        "a value keeps its trailing spaces"
    ),
]
# One byte a second: Kafka's throttle is a whole number of B/s (rebalance.py rounds to it).
MIN_THROTTLE_MB_S = 1 / BYTES_PER_MB
Throttle = Annotated[
    float | None, typer.Option(help="replication throttle in MB/s while replicas move")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="print the plan, move nothing")]
Timeout = Annotated[float, typer.Option(help="seconds to follow the moves before giving up")]
WAIT_SECONDS = 300.0  # a broker's restart under load, with room to spare
Wait = Annotated[
    float,
    typer.Option(
        help="seconds to wait for every broker the stack declares to be live (one restarting "
        "or fenced) before planning; past it, nothing is moved"
    ),
]


def _client(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    settings = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            if not sep:
                raise fail(f"--client-config {path}: {line!r} is not key=value")
            # Spaces after the `=` go, as Java's .properties reading drops them; the value's
            # end stays as written (a password may end with a space).
            settings[key.strip()] = value.lstrip()
    from infra.errors import ConfigError
    from infra.model.secret_text import java_login_properties

    try:  # what the Java tools' login cannot carry, refused before anything is asked of Kafka
        java_login_properties(settings)
    except ConfigError as err:
        raise fail(f"--client-config {path}: {err}") from None
    return settings


def _run(
    stack: str,
    stacks_dir: Path,
    bootstrap: str,
    client_config: Path | None,
    throttle: float | None,
    dry_run: bool,
    timeout: float,
    wait: float,
    remove: frozenset[int] = frozenset(),
) -> None:
    from infra.config import load_stack
    from infra.errors import ConfigError
    from infra.growth.rebalance import plan_table, rebalance
    from infra.growth.tools import KafkaTools

    for option, seconds in (("--wait", wait), ("--timeout", timeout)):
        if not math.isfinite(seconds) or seconds < 0:
            raise fail(f"{option} {seconds:g}: give a number of seconds, 0 or more, e.g. 300")
    if throttle is not None and not (math.isfinite(throttle) and throttle >= MIN_THROTTLE_MB_S):
        # round(inf) raises; a rate that rounds to 0 B/s would be no throttle at all.
        raise fail(
            f"--throttle {throttle:g}: give MB/s of at least {MIN_THROTTLE_MB_S:g}, e.g. 50, "
            "or leave it out"
        )
    try:
        config = load_stack(stacks_dir, stack)
        tools = KafkaTools(bootstrap, _client(client_config), config.kafka_version)
        result = rebalance(config, tools, throttle, wait, dry_run, remove, typer.echo, timeout)
    except ConfigError as err:
        raise fail(str(err)) from None
    for line in plan_table(result):
        typer.echo(line)
    if not dry_run and result.plan.moves:
        typer.echo(f"moved {result.bytes_moved} bytes in {result.seconds:.1f} s")


def rebalance(
    stack: Annotated[str, typer.Option(help="environment the cluster was deployed from")],
    bootstrap: Bootstrap,
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    client_config: ClientConfig = None,
    throttle: Throttle = None,
    dry_run: DryRun = False,
    timeout: Timeout = 3600,
    wait: Wait = WAIT_SECONDS,
) -> None:
    """Spread replicas and leaders over every broker, racks apart (after adding brokers)."""
    _run(stack, stacks_dir, bootstrap, client_config, throttle, dry_run, timeout, wait)


def drain(
    stack: Annotated[str, typer.Option(help="environment the cluster was deployed from")],
    brokers: Annotated[str, typer.Option(help="broker ids to empty, e.g. 3,4")],
    bootstrap: Bootstrap,
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    client_config: ClientConfig = None,
    throttle: Throttle = None,
    dry_run: DryRun = False,
    timeout: Timeout = 3600,
    wait: Wait = WAIT_SECONDS,
) -> None:
    """Move every replica off BROKERS, so the stack can then shrink without losing data."""
    try:
        remove = frozenset(int(b) for b in brokers.split(",") if b.strip())
    except ValueError:
        raise fail(
            f"--brokers {brokers!r}: give broker ids separated by commas, e.g. 3,4"
        ) from None
    if not remove:
        raise fail("--brokers: name at least one broker id, e.g. 3,4")
    _run(stack, stacks_dir, bootstrap, client_config, throttle, dry_run, timeout, wait, remove)


def remove_voters(
    stack: Annotated[str, typer.Option(help="environment, as the change will declare it")],
    stacks_dir: Annotated[Path, typer.Option(help="where the stack files are")] = STACKS,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="name the voters to remove, remove none")
    ] = False,
    timeout: Annotated[
        float, typer.Option(help="seconds to wait for caught-up voters and each removal")
    ] = 600,
) -> None:
    """Remove from the KRaft voter set, one at a time, the voters STACK no longer declares
    (through `kubectl exec` in a staying voter's pod), so the change can delete them."""
    from infra.config import load_stack
    from infra.errors import ConfigError
    from infra.voter_removal import QuorumUnreachable, kubectl_exec
    from infra.voter_removal import remove_voters as remove

    try:
        config = load_stack(stacks_dir, stack)
        remove(config, kubectl_exec(config.namespace), typer.echo, timeout, dry_run)
    except (ConfigError, QuorumUnreachable) as err:
        raise fail(str(err)) from None


def register(app: typer.Typer) -> None:
    """Add this area's commands to the top-level app."""
    app.command()(rebalance)
    app.command()(drain)
    app.command()(remove_voters)
