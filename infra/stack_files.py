"""Writes sizing into stack files (`kafkastack apply-sizing`), keeping comments and key order.

The sizing lands in stack config, not beside it, so `pulumi preview` on a pull request shows a
sizing change as the config diff that caused the resource changes.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from pydantic import ValidationError
from ruamel.yaml import YAML

from infra.config import NAMESPACE, load_stack
from infra.errors import ConfigError
from infra.stack_config import StackConfig
from infra.stack_documents import read_stack_file
from spark_sizing.contract import (
    SUPPORTED_SCHEMA_VERSIONS,
    SizingReport,
    StackSizing,
    first_error,
)

SIZING_KEY = f"{NAMESPACE}:sizing"


def read_sizing(path: Path) -> SizingReport:
    if not path.is_file():
        raise ConfigError(f"--sizing {path}: no such file; run `kafkastack size` first")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"--sizing {path}: not a sizing.json (not UTF-8 text)") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"--sizing {path}: not JSON ({err.msg} at line {err.lineno})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise ConfigError(
            f"--sizing {path}: schema_version {version!r} is not supported "
            f"({', '.join(sorted(SUPPORTED_SCHEMA_VERSIONS))}); re-run `kafkastack size`"
        )
    try:
        report = SizingReport.model_validate(data)
    except ValidationError as err:
        field, problem = first_error(err)
        raise ConfigError(f"--sizing {path}: field {field}: {problem}") from None
    c = report.cluster
    if len(c.brokers_per_zone) != c.zones or sum(c.brokers_per_zone) != c.brokers:
        raise ConfigError(
            f"--sizing {path}: field cluster.brokers_per_zone: {c.brokers_per_zone} does not "
            f"spread {c.brokers} brokers over {c.zones} zones; re-run `kafkastack size` rather "
            "than editing sizing.json"
        )
    return report


def _check_shape(sizing: StackSizing, config: StackConfig, sizing_path: Path) -> None:
    """A sizing is computed for a number of zones and a kind of quorum: on a stack of another
    shape its counts would be wrong (a zone's share of brokers, the quorum's pods)."""
    c = sizing.cluster
    if c.zones != len(config.zones):
        raise ConfigError(
            f"--sizing {sizing_path}: sized for {c.zones} zone(s), but stack "
            f"{config.environment} lists {len(config.zones)} ({NAMESPACE}:zones); re-run "
            f"`kafkastack size --zones {len(config.zones)}`"
        )
    if c.quorum.kind != config.quorum.kind:
        raise ConfigError(
            f"--sizing {sizing_path}: sized for a {c.quorum.kind} quorum, but stack "
            f"{config.environment} runs {config.quorum.kind} ({NAMESPACE}:quorum.kind); re-run "
            f"`kafkastack size --quorum {config.quorum.kind}`"
        )


def apply_sizing(sizing_path: Path, stacks_dir: Path, environment: str) -> StackSizing:
    """Write the cluster part of sizing.json under `kafkastack:sizing`, then validate the stack.

    The file is only replaced when the resulting stack passes every safety check.
    """
    report = read_sizing(sizing_path)
    stack_sizing = StackSizing(
        schema_version=report.schema_version, source=str(sizing_path), cluster=report.cluster
    )
    path = stacks_dir / f"Pulumi.{environment}.yaml"
    if not path.is_file():
        raise ConfigError(f"--stack {environment}: {path} does not exist; create the stack file")
    read_stack_file(path)  # a file that is no stack file is refused as every reader refuses it
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    original = path.read_text(encoding="utf-8")
    document = yaml.load(original)
    document["config"][SIZING_KEY] = stack_sizing.model_dump(mode="json")
    buffer = StringIO()
    yaml.dump(document, buffer)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    try:
        _check_shape(stack_sizing, load_stack(stacks_dir, environment), sizing_path)
    except BaseException:
        # Whatever stopped it (a refusal, a bug, Ctrl-C), the stack file is as it was.
        path.write_text(original, encoding="utf-8")
        raise
    return stack_sizing
