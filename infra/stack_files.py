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
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ConfigError(f"--sizing {path}: not JSON ({err.msg} at line {err.lineno})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise ConfigError(
            f"--sizing {path}: schema_version {version!r} is not supported "
            f"({', '.join(sorted(SUPPORTED_SCHEMA_VERSIONS))}); re-run `kafkastack size`"
        )
    try:
        return SizingReport.model_validate(data)
    except ValidationError as err:
        field, problem = first_error(err)
        raise ConfigError(f"--sizing {path}: field {field}: {problem}") from None


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
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    document = yaml.load(path.read_text(encoding="utf-8"))
    document.setdefault("config", {})[SIZING_KEY] = stack_sizing.model_dump(mode="json")
    buffer = StringIO()
    yaml.dump(document, buffer)
    original = path.read_text(encoding="utf-8")
    path.write_text(buffer.getvalue(), encoding="utf-8")
    try:
        load_stack(stacks_dir, environment)
    except ConfigError:
        path.write_text(original, encoding="utf-8")
        raise
    return stack_sizing
