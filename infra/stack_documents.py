"""Reading stack files: YAML with no key written twice, a `config:` mapping of `kafkastack:`
settings, and no password in clear text. What the settings say is `infra/config.py`'s to check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from infra.config_base import NAMESPACE
from infra.errors import ConfigError

# Secret keys (`pulumi config set --secret kafkastack:password-<user> …`): read by name through
# Pulumi, never validated or passed around as part of `StackConfig`.
PASSWORD_KEY_PREFIX = "password-"
# Provider settings that may sit beside ours in a stack file (kubeconfig, context, render mode).
PROVIDER_NAMESPACES = ("kubernetes",)


def stack_values(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """`kafkastack:` values of a stack's config, without the prefix and without secrets.

    Any other namespace than ours and the provider's is refused: it is a typo Pulumi would
    silently pass along.
    """
    foreign = [
        k
        for k in raw
        if str(k).split(":", 1)[0] not in (NAMESPACE, *PROVIDER_NAMESPACES) or ":" not in str(k)
    ]
    if foreign:
        raise ConfigError(
            f"{source}: key {foreign[0]!r} is outside the {NAMESPACE}: namespace; "
            f"prefix it with {NAMESPACE}:"
        )
    values = {}
    for key, value in raw.items():
        namespace, name = str(key).split(":", 1)
        if namespace == NAMESPACE and not name.startswith(PASSWORD_KEY_PREFIX):
            values[name] = value
    return values


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML keeps the last of a key written twice; a stack file must not hide the first."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor`: its keys may be overridden here, as YAML means
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str | int | float | bool | None):
                continue  # an unhashable key: SafeLoader's own error says so below
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is written twice; keep one", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def stack_document(path: Path) -> dict[str, Any]:
    """A stack file as YAML (its `config:` and whatever Pulumi keeps beside it)."""
    if not path.is_file():
        raise ConfigError(
            f"{path}: no such stack file; check --stack, or run from the project's folder "
            "(or name its stacks folder with --stacks-dir)"
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start}); save it as UTF-8") from None
    try:
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError(f"{path}{where}: not valid YAML: {problem}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"{path}: is a {type(document).__name__}, not a stack file: a mapping with a "
            f"config: section of {NAMESPACE}:<key> settings"
        )
    return document


def read_stack_file(path: Path) -> dict[str, Any]:
    """`kafkastack:` values of a stack file, without the prefix."""
    document = stack_document(path)
    config = document.get("config")
    if not config:
        others = ", ".join(str(k) for k in document) or "none"
        raise ConfigError(
            f"{path}: no config: section (top-level keys: {others}); {NAMESPACE}:zones and "
            f"{NAMESPACE}:sizing are required (docs/provisioning.md)"
        )
    if not isinstance(config, dict):
        raise ConfigError(
            f"{path}: config: is a {type(config).__name__}; it is a mapping of "
            f"{NAMESPACE}:<key>: <value> settings"
        )
    refuse_clear_passwords(config, str(path))
    return stack_values(config, str(path))


def refuse_clear_passwords(config: dict[str, Any], source: str) -> None:
    """A password written in the stack file itself is in git for anyone to read: only Pulumi's
    encrypted form (`secure:`) may be there."""
    for key, value in config.items():
        name = str(key).removeprefix(f"{NAMESPACE}:")
        if name.startswith(PASSWORD_KEY_PREFIX) and not (
            isinstance(value, dict) and set(value) == {"secure"}
        ):
            raise ConfigError(
                f"{source}: {key} is written in clear text; remove it and set it with "
                f"`pulumi config set --secret {key}`"
            )
