"""The real Pulumi engine, driven offline: the `pulumi` CLI, the Python language host and the
Kubernetes provider that scripts/toolchain builds, a file backend and a passphrase.

kafkastack runs the engine on a working copy of a stack file (`--config-file`): the committed
file stays what people edit and review, while what the engine writes into a config file (the
encryption salt, secrets kafkastack generates) lives beside the state, in a place that belongs
to whoever owns that state (the local cluster, a test, a preview run).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infra.config import NAMESPACE, secret_keys
from infra.protocol_changes import ProtocolChange, protocol_changes
from infra.stack_config import StackConfig
from infra.stack_documents import stack_document
from infra.toolchain import ToolchainError, bin_dir, binary, cache_dir

PROJECT_DIR = Path(__file__).resolve().parent.parent
# Only for stacks whose state is a throwaway on this machine (the local cluster, tests); any other
# stack takes the passphrase from PULUMI_CONFIG_PASSPHRASE like every Pulumi user.
LOCAL_PASSPHRASE = "kafkastack-local-only"
# The CLI's setting that writes the state once per command instead of after every step.
SKIP_CHECKPOINTS = "PULUMI_SKIP_CHECKPOINTS"
# Keys the engine itself writes into a config file; kept across refreshes of the working copy.
ENGINE_KEYS = ("encryptionsalt", "secretsprovider", "encryptedkey")
# Kubernetes objects whose replacement or deletion loses data or a broker's identity.
STATEFUL_TYPES = frozenset(
    {
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        "kubernetes:core/v1:Namespace",
    }
)


class EngineError(RuntimeError):
    """A Pulumi command failed; the message carries the engine's own words."""


def owned_state_home() -> Path:
    """PULUMI_HOME for the engine on a throwaway state (`Engine.throwaway_state`: the local
    cluster's, a test's, a preview's base), in the cache rather than the user's ~/.pulumi.

    Since v3.25x the CLI writes an automatic log of each command into PULUMI_HOME/logs: every
    verbose message with the resources' properties, JSON-encoded, gzip-compressed and encrypted
    (3–5 MB a command; the test suite filled 500 MB of root's home). Encoding it was 45 % of the
    CLI's CPU in a preview (profiled with `--profiling`): a preview of prod took 12 CPU-seconds,
    9 without it. Nobody reads these logs for a throwaway state, and the CLI has no setting to
    stop writing them, but it goes on without one when it cannot make the folder: `logs` is a
    file here. Plugins a user installed (`pulumi plugin install`) stay reachable through a link."""
    home = cache_dir() / "pulumi-home"
    home.mkdir(parents=True, exist_ok=True)
    logs = home / "logs"
    if logs.is_dir():  # made by a CLI run before this home was set up so
        shutil.rmtree(logs, ignore_errors=True)
    if not logs.is_file():
        unique = home / f".logs.{os.getpid()}"
        unique.write_text("Not a folder, so that the pulumi CLI keeps no automatic log here.\n")
        unique.replace(logs)
    plugins = Path.home() / ".pulumi" / "plugins"
    if plugins.is_dir() and not (home / "plugins").exists():
        # Another engine command may have linked it first.
        with contextlib.suppress(FileExistsError):
            (home / "plugins").symlink_to(plugins, target_is_directory=True)
    return home


@dataclass(frozen=True)
class Step:
    """One resource step of a preview: what the engine would do to one object."""

    op: str  # create | update | replace | delete | same | …
    type: str
    name: str
    diffs: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.type.rsplit(":", 1)[-1]

    @property
    def data_loss_risk(self) -> bool:
        return self.type in STATEFUL_TYPES and self.op in {"replace", "delete"}


# A replacement shows as several steps; the one that names the intent stands for them all.
_REPLACE_OPS = {"replace", "create-replacement", "delete-replaced"}


def steps_from_preview(document: dict[str, Any]) -> list[Step]:
    """The resource steps of `pulumi preview --json`, one per object, components left out."""
    found: dict[str, Step] = {}
    for step in document.get("steps", []):
        state = step.get("newState") or step.get("oldState") or {}
        type_ = str(state.get("type", ""))
        if not type_.startswith("kubernetes:"):
            continue  # components and providers are not Kubernetes objects
        urn = str(step["urn"])
        op = "replace" if step["op"] in _REPLACE_OPS else str(step["op"])
        if urn in found and found[urn].op == "replace":
            continue
        metadata = (state.get("inputs") or {}).get("metadata") or {}
        # People know objects by their Kubernetes name, not by the program's logical name.
        name = str(metadata.get("name") or urn.rsplit("::", 1)[-1])
        # Why: the fields forcing a replacement, else the fields that differ.
        why = step.get("replaceReasons") or step.get("detailedDiff") or step.get("diffs") or ()
        found[urn] = Step(op, type_, name, tuple(str(field) for field in why))
    return sorted(found.values(), key=lambda s: (s.op, s.type, s.name))


# What rendered files and throwaway states hold instead of a SCRAM password.
PLACEHOLDER_SECRET = "render-placeholder-not-a-secret"


def placeholder_passwords(config: StackConfig, prefix: str = f"{NAMESPACE}:") -> dict[str, str]:
    """Every secret key (SCRAM users, ZooKeeper), with the config namespace `prefix`, each
    holding the visible placeholder: run-only config for renders and throwaway states."""
    return {f"{prefix}{key}": PLACEHOLDER_SECRET for key in secret_keys(config)}


@dataclass(frozen=True)
class Preview:
    steps: list[Step]
    summary: dict[str, int]
    errors: list[str]  # what the engine refused, e.g. replacing a protected object
    protocol_changes: list[ProtocolChange] = field(default_factory=list)  # cannot roll
    warnings: list[str] = field(default_factory=list)  # the program's and the providers'


def working_config(stack_file: Path, previous: Path, extra: dict[str, Any]) -> str:
    """The committed stack file with what the engine wrote last time, plus run-only settings."""
    document = stack_document(stack_file)
    config = dict(document.get("config") or {})
    if previous.is_file():
        before = yaml.safe_load(previous.read_text(encoding="utf-8")) or {}
        for key in ENGINE_KEYS:
            if key in before and key not in document:
                document[key] = before[key]
        # Secrets kafkastack set on the working copy (generated passwords) stay.
        for key, value in (before.get("config") or {}).items():
            if isinstance(value, dict) and "secure" in value and key not in config:
                config[key] = value
    config.update(extra)
    document["config"] = config
    return yaml.safe_dump(document, sort_keys=False)


@dataclass(frozen=True)
class Engine:
    """One backend and its stacks. `state_dir=None` uses the backend the user is logged in to."""

    state_dir: Path | None
    project_dir: Path = PROJECT_DIR
    kubeconfig: Path | None = None
    passphrase: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def throwaway_state(self) -> bool:
        """State kafkastack keeps on this machine for itself (the local cluster's, a test's, a
        preview's base): a file backend with the local passphrase."""
        return self.state_dir is not None and self.passphrase == LOCAL_PASSPHRASE

    def config_file(self, stack: str) -> Path:
        base = self.state_dir or (cache_dir() / "pulumi-config")
        return base / "config" / f"Pulumi.{stack}.yaml"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        venv_bin = self.project_dir / ".venv" / "bin"
        env["PATH"] = f"{bin_dir()}:{venv_bin}:{env.get('PATH', '')}"
        # The program imports this project's packages: the checkout being run, never whichever
        # checkout the virtualenv was installed from (a base revision's worktree, say).
        env["PYTHONPATH"] = str(self.project_dir)
        # The program's typechecker (Pulumi.yaml: mypy) runs before every engine command, by
        # default with its cache in the program folder: cold in the base revision's worktree of
        # each `kafkastack preview --base` (about 15 s of CPU, twice per preview). mypy checks a
        # cached module by its content hash when the path differs, so one cache outside the
        # checkouts serves them all. A cache folder the user chose stays theirs.
        env.setdefault("MYPY_CACHE_DIR", str(cache_dir() / "mypy"))
        env.update(
            {
                "PULUMI_SKIP_UPDATE_CHECK": "true",
                # Plugins come from scripts/toolchain: never download one mid-run.
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
                "PULUMI_DISABLE_REGISTRY_RESOLVE": "true",
                "PULUMI_SKIP_CONFIRMATIONS": "true",
            }
        )
        if self.state_dir is not None:
            backend = self.state_dir / "backend"
            backend.mkdir(parents=True, exist_ok=True)
            env["PULUMI_BACKEND_URL"] = backend.resolve().as_uri()
        # A home the user chose stays theirs, logs and all, and so does their own state's.
        if self.throwaway_state and "PULUMI_HOME" not in env:
            env["PULUMI_HOME"] = str(owned_state_home())
        if self.throwaway_state:
            # By default the CLI rewrites the whole state after every resource step: a render
            # of prod spent 12 CPU-seconds in the CLI, 2.6 with the state written once, when the
            # command ends (failed, or cancelled by a Ctrl-C: `run` lets it end). What that
            # trades: a CLI killed outright mid-update leaves objects its state does not know,
            # and the next `pulumi up` stops on one that already exists. Such a state is a
            # render's, a preview's base or the local cluster's, which `kafkastack local down`
            # removes with all it made. A choice of the user's own stays theirs.
            env.setdefault(SKIP_CHECKPOINTS, "true")
        # A real stack's passphrase is the user's (PULUMI_CONFIG_PASSPHRASE[_FILE]); without one
        # Pulumi stops and says so, rather than encrypting secrets with an empty passphrase.
        if self.passphrase is not None:
            env["PULUMI_CONFIG_PASSPHRASE"] = self.passphrase
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = str(self.kubeconfig)
        env.update(self.extra_env)
        return env

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            pulumi = binary("pulumi")
        except ToolchainError as err:
            raise EngineError(str(err)) from None
        command = [pulumi, *args, "--non-interactive", "--cwd", str(cwd or self.project_dir)]
        with subprocess.Popen(
            command,
            stdin=subprocess.PIPE if stdin is not None else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env(),
        ) as process:
            try:
                stdout, stderr = process.communicate(stdin)
            except KeyboardInterrupt:
                # A terminal's Ctrl-C reached the CLI too (one process group): it ends the
                # update and writes its state, all of it on a state written once per command
                # (SKIP_CHECKPOINTS). subprocess.run would kill it outright a quarter of a
                # second later; this waits for it. A second Ctrl-C stops waiting (and makes the
                # CLI itself stop at once).
                process.communicate()
                raise
        result = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        if check and result.returncode != 0:
            words = "\n".join(error_diagnostics(result.stdout))
            words = words or (result.stderr.strip() or result.stdout.strip())[-3000:]
            raise EngineError(f"pulumi {' '.join(args[:2])}: {words}")
        return result

    def _stack_args(self, stack: str) -> list[str]:
        return ["--stack", stack, "--config-file", str(self.config_file(stack))]

    def select(
        self, stack: str, stack_file: Path, extra_config: dict[str, Any] | None = None
    ) -> None:
        """Create the stack if needed and refresh its working config from the stack file."""
        target = self.config_file(stack)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(working_config(stack_file, target, extra_config or {}), encoding="utf-8")
        listed = json.loads(self.run("stack", "ls", "--json").stdout or "[]")
        if stack not in {entry["name"] for entry in listed}:
            # `stack init` writes the new stack's encryption salt into its config file and
            # takes no --config-file: run it where that file is the working copy.
            (target.parent / "Pulumi.yaml").write_text(
                (self.project_dir / "Pulumi.yaml")
                .read_text(encoding="utf-8")
                .replace("stackConfigDir:", "# stackConfigDir:"),
                encoding="utf-8",
            )
            self.run("stack", "init", stack, "--secrets-provider", "passphrase", cwd=target.parent)

    def set_secret(self, stack: str, user_key: str, value: str) -> None:
        """`pulumi config set --secret kafkastack:<key>`, the value on stdin (never in argv)."""
        self.run(
            "config",
            "set",
            "--secret",
            f"{NAMESPACE}:{user_key}",
            *self._stack_args(stack),
            stdin=value,
        )

    def config_keys(self, stack: str) -> set[str]:
        shown = self.run("config", "--json", *self._stack_args(stack)).stdout
        return set(json.loads(shown or "{}"))

    def up(self, stack: str, expect_no_changes: bool = False) -> dict[str, int]:
        """`pulumi up`; returns the engine's change summary (operation → count)."""
        return change_summary(self.up_events(stack, expect_no_changes))

    def up_events(self, stack: str, expect_no_changes: bool = False) -> str:
        """`pulumi up --json`: the engine's event stream, one JSON event a line."""
        args = ["up", "--yes", "--skip-preview", "--json", *self._stack_args(stack)]
        if expect_no_changes:
            args.append("--expect-no-changes")
        return self.run(*args).stdout

    def preview(self, stack: str) -> Preview:
        """`pulumi preview --json`: the steps against the stack's state, and the engine's own
        refusals (a protected object it would replace) beside them rather than instead."""
        result = self.run("preview", "--json", *self._stack_args(stack), check=False)
        try:
            document = json.loads(result.stdout)
        except json.JSONDecodeError:
            document = {}
        if "changeSummary" not in document:
            words = (result.stderr.strip() or result.stdout.strip())[-3000:]
            raise EngineError(f"pulumi preview: {words}")
        said = {
            severity: [
                " ".join(str(d.get("message", "")).split())
                for d in document.get("diagnostics", [])
                if d.get("severity") == severity
            ]
            for severity in ("error", "warning")
        }
        return Preview(
            steps_from_preview(document),
            dict(document["changeSummary"]),
            said["error"],
            protocol_changes(document),
            said["warning"],
        )

    def destroy(self, stack: str) -> None:
        self.run("destroy", "--yes", "--skip-preview", *self._stack_args(stack))

    def outputs(self, stack: str) -> dict[str, Any]:
        shown = self.run("stack", "output", "--json", "--stack", stack).stdout
        return dict(json.loads(shown or "{}"))

    def exported_state(self, stack: str) -> str:
        """The stack's state as the backend keeps it (what a leaked state file would show)."""
        return self.run("stack", "export", "--stack", stack).stdout


def change_summary(stdout: str) -> dict[str, int]:
    """Operation → count, from the summary event of `pulumi up --json`'s event stream."""
    for event in reversed(list(_events(stdout))):
        if "summaryEvent" in event:
            changes = event["summaryEvent"].get("resourceChanges") or {}
            return {str(op): int(n) for op, n in changes.items()}
    return {}


def error_diagnostics(stdout: str) -> list[str]:
    """The engine's and the provider's errors in a `--json` event stream, each with the
    resource it is about. The stream's tail is mostly resource outputs: an error a resource hit
    minutes earlier is far above it."""
    errors = []
    for event in _events(stdout):
        diagnostic = event.get("diagnosticEvent") or {}
        if diagnostic.get("severity") == "error":
            resource = str(diagnostic.get("urn", "")).rsplit("::", 1)[-1]
            message = str(diagnostic.get("message", "")).strip()
            errors.append(f"{resource}: {message}" if resource else message)
    return errors


def update_sequence(stdout: str) -> list[tuple[str, str]]:
    """(phase, name) of each updated resource, in the order the engine reported them: phase
    "start" when it began the update, "done" when the provider had finished (and awaited) it."""
    sequence = []
    for event in _events(stdout):
        for key, phase in (("resourcePreEvent", "start"), ("resOutputsEvent", "done")):
            metadata = (event.get(key) or {}).get("metadata") or {}
            if metadata.get("op") == "update":
                sequence.append((phase, str(metadata.get("urn", "")).rsplit("::", 1)[-1]))
    return sequence


def _events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON events of `pulumi up --json`, one a line; other lines (warnings) are skipped."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event
