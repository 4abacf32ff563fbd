"""The binaries and packages kafkastack runs, where they come from, and whether they agree.

One home for the cache layout the build scripts write (`scripts/toolchain/lib.sh`): binaries in
`$KAFKASTACK_CACHE/bin`, a stamp per part with the pin it was built from, and an `.origin` line
saying whether it was built here (from which source) or found installed. `kafkastack doctor`
prints this table and fails when a part is missing or the engine and SDK versions disagree.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from spark_sizing.launch import cache_root

VERSIONS_FILE = Path(__file__).resolve().parent.parent / "scripts" / "toolchain" / "versions.env"


class ToolchainError(RuntimeError):
    """A binary kafkastack needs is missing; the message says how to get it."""


def cache_dir() -> Path:
    return cache_root(os.environ)


def bin_dir() -> Path:
    return cache_dir() / "bin"


def binary(name: str) -> str:
    """A binary the toolchain scripts put in the cache (or an installed one of that name)."""
    path = bin_dir() / name
    if path.is_file():
        return str(path)
    found = shutil.which(name)
    if found:
        return found
    raise ToolchainError(f"{name} is missing: run `make toolchain` (scripts/toolchain/)")


def kafka_lib(version: str) -> Path:
    """Kafka `version`'s runtime jars (scripts/kafka/fetch.sh), or ToolchainError."""
    lib = cache_dir() / "kafka" / version / "lib"
    if not (lib.parent / ".complete").is_file():
        raise ToolchainError(
            f"Kafka {version} jars are not in {lib}: run scripts/kafka/fetch.sh {version}"
        )
    return lib


def kafka_class_archive(lib: Path) -> Path:
    """Where scripts/kafka/class-archive.sh puts the class archive of the jars in `lib`."""
    return lib.parent / "kafka.jsa"


def kafka_jvm_classes(lib: Path) -> str:
    """The java options that put Kafka's jars in `lib` on the classpath, as the image's
    kafka-run-class.sh does: the jars in name order (a class archive holds only for the classpath
    it was dumped with, and the JVM's own `lib/*` expands in directory order) and, when
    scripts/kafka/class-archive.sh recorded one for them, the class archive (a broker starts on
    about 60 % of the CPU time, bench/kafka_start.py). An archive the JVM cannot use (another
    JDK) it skips, quietly."""
    jars = ":".join(str(jar) for jar in sorted(lib.glob("*.jar")))
    options = ["-cp", jars]
    archive = kafka_class_archive(lib)
    if archive.is_file():
        options = [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", *options]
    return shlex.join(options)


def zookeeper_lib(kafka_version: str) -> Path:
    """ZooKeeper's own runtime (its jars and logback, as its release ships) at the version the
    Kafka 3.x release was built with, which scripts/kafka/fetch.sh fetches beside Kafka's."""
    jars = sorted(kafka_lib(kafka_version).glob("zookeeper-[0-9]*.jar"))
    if not jars:
        raise ToolchainError(f"Kafka {kafka_version} brings no ZooKeeper jar: no ZooKeeper mode")
    version = jars[0].name.removeprefix("zookeeper-").removesuffix(".jar")
    lib = cache_dir() / "zookeeper" / version / "lib"
    if not (lib.parent / ".complete").is_file():
        raise ToolchainError(
            f"ZooKeeper {version} jars are not in {lib}: run scripts/kafka/fetch.sh {kafka_version}"
        )
    return lib


def pinned_versions(path: Path = VERSIONS_FILE) -> dict[str, str]:
    """`NAME=value` lines of versions.env (the single place pins are written)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            pins[key.strip()] = value.strip().strip('"')
    return pins


@dataclass(frozen=True)
class Part:
    name: str
    version: str  # what the part reports, or "missing"
    origin: str
    ok: bool
    note: str = ""


def _origin(stamp: str, path: str | None) -> str:
    origin_file = cache_dir() / "stamps" / f"{stamp}.origin"
    if origin_file.is_file():
        return origin_file.read_text(encoding="utf-8").strip()
    if path is None:
        return "not installed"
    return "built by scripts/toolchain" if path.startswith(str(bin_dir())) else f"found at {path}"


def _stamped(stamp: str, path: str) -> str:
    """A plugin has no version flag: the pin its stamp records, or the plugin folder's name."""
    stamp_file = cache_dir() / "stamps" / stamp
    if path.startswith(str(bin_dir())) and stamp_file.is_file():
        return stamp_file.read_text(encoding="utf-8").split(":", 1)[0].strip()
    return Path(path).parent.name.rsplit("-", 1)[-1]  # …/plugins/resource-kubernetes-v4.32.0


def _run_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except OSError as err:
        return f"unusable ({err.strerror})"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].strip() if text else f"exit {out.returncode}"


def _which(name: str) -> str | None:
    try:
        return binary(name)
    except ToolchainError:
        return None


def _installed_plugin(name: str, version: str | None) -> str | None:
    """A provider from `pulumi plugin install` (PULUMI_HOME/plugins/resource-kubernetes-v…)."""
    if not name.startswith("pulumi-resource-") or version is None:
        return None
    home = Path(os.environ.get("PULUMI_HOME") or Path.home() / ".pulumi")
    plugin = name.removeprefix("pulumi-resource-")
    path = home / "plugins" / f"resource-{plugin}-v{version}" / name
    return str(path) if path.is_file() else None


def _package(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def parts() -> list[Part]:
    """Every engine part, with the checks that matter: present, and versions that agree."""
    pins = pinned_versions()
    cli_pin = pins["PULUMI_VERSION"].lstrip("v")
    provider_pin = pins["PULUMI_KUBERNETES_VERSION"].lstrip("v")
    result: list[Part] = []

    def add(
        name: str,
        stamp: str,
        argv_tail: list[str] | None,
        want: str | None,
        target: str = "toolchain",
    ) -> None:
        path = _which(name) or _installed_plugin(name, want)
        if path is None:
            result.append(Part(name, "missing", "not installed", False, f"run `make {target}`"))
            return
        version = (
            _run_version([path, *argv_tail]) if argv_tail is not None else _stamped(stamp, path)
        )
        ok = want is None or want in version
        note = "" if ok else f"expected {want}"
        result.append(Part(name, version, _origin(stamp, path), ok, note))

    add("pulumi", "pulumi", ["version"], cli_pin)
    # Plugins have no version flag; their stamps record the pin they were built from.
    add("pulumi-language-python", "pulumi-language-python", None, cli_pin)
    add("pulumi-resource-kubernetes", "pulumi-resource-kubernetes", None, provider_pin)
    add("kubectl", "kube", ["version", "--client"], pins["KUBERNETES_VERSION"])
    add("kube-apiserver", "kube", ["--version"], pins["KUBERNETES_VERSION"])
    add("etcd", "etcd", ["--version"], pins["ETCD_VERSION"].lstrip("v"))
    add("kwokctl", "kwok", ["--version"], pins["KWOK_VERSION"])
    cert_manager = pins["CERT_MANAGER_VERSION"]
    add("cert-manager-controller", "cert-manager", ["-version"], cert_manager)
    # Real nodes (`make nodes-toolchain`, docs/real-nodes.md).
    add("kubelet", "kubelet", ["--version"], pins["KUBERNETES_VERSION"], "nodes-toolchain")
    add("kube-proxy", "kubelet", ["--version"], pins["KUBERNETES_VERSION"], "nodes-toolchain")
    add("containerd", "containerd", ["--version"], pins["CONTAINERD_VERSION"], "nodes-toolchain")
    add("coredns", "coredns", ["-version"], pins["COREDNS_VERSION"].lstrip("v"), "nodes-toolchain")
    add("multus", "multus", ["-version"], pins["MULTUS_VERSION"], "nodes-toolchain")
    for package, want in (("pulumi", cli_pin), ("pulumi-kubernetes", provider_pin)):
        have = _package(package)
        result.append(
            Part(
                f"python: {package}",
                have,
                "the project's virtualenv",
                have == want,
                "" if have == want else f"must equal the engine's {want}: reinstall with make venv",
            )
        )
    return result
