"""The in-pod paths a process expects, made inside its own mount namespace and nowhere else.

`ip netns exec` already runs each process in a mount namespace of its own (a slave of the
host's: nothing mounted there propagates back). The rendered configs name in-pod paths such as
/etc/kafka/config that the host lacks, and creating them as mount points would write to the
host. Instead, the nearest directory the host has on the way to each path (/etc, /var/lib) is
covered with an overlay whose writable layer is a tmpfs of the run: the mount points are made in
that layer, the host's tree is only read, and everything vanishes with the process.
"""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

from infra.verify.errors import VerifyError

NETNS_ETC = Path("/etc/netns")


def overlaid_directory(target: str) -> PurePosixPath:
    """The nearest existing directory above `target` (or `target` itself when it exists)."""
    path = PurePosixPath(target)
    for candidate in (path, *path.parents):
        if Path(candidate).is_dir():
            if candidate == PurePosixPath("/"):
                raise VerifyError(
                    f"in-pod path {target} has no parent directory on this host but /; "
                    "the harness would have to create it in the host's root"
                )
            return candidate
    raise VerifyError(f"in-pod path {target} is not absolute")


def _covers(outer: PurePosixPath, inner: PurePosixPath) -> bool:
    return inner == outer or outer in inner.parents


def overlays(targets: list[str]) -> list[PurePosixPath]:
    """The directories to cover: one per target, none inside another."""
    found = sorted({overlaid_directory(t) for t in targets}, key=lambda p: len(p.parts))
    result: list[PurePosixPath] = []
    for directory in found:
        if not any(_covers(outer, directory) for outer in result):
            result.append(directory)
    return result


def mount_script(
    mounts: list[tuple[Path, str]], scratch: Path, namespace: str | None, command: str
) -> str:
    """Shell lines for `ip netns exec <namespace> sh -c` (or, with no namespace, a mount
    namespace on the host's network): cover, create, bind, then exec."""
    covered = overlays([target for _, target in mounts])
    for source, _ in mounts:
        inside = [d for d in covered if _covers(d, PurePosixPath(source.resolve()))]
        if inside:
            raise VerifyError(
                f"the run folder {source} lies under {inside[0]}, which the harness covers "
                "for in-pod paths; use a run folder elsewhere (such as /tmp)"
            )
    q = shlex.quote
    lines = ["set -e", f"mkdir -p {q(str(scratch))}", f"mount -t tmpfs tmpfs {q(str(scratch))}"]
    for i, directory in enumerate(covered):
        upper, work = scratch / f"{i}-upper", scratch / f"{i}-work"
        lines.append(f"mkdir -p {q(str(upper))} {q(str(work))}")
        options = f"lowerdir={directory},upperdir={upper},workdir={work}"
        lines.append(f"mount -t overlay overlay -o {q(options)} {q(str(directory))}")
    # The overlay hides what `ip netns exec` bound over /etc (the host's names): bind it again.
    netns_files = NETNS_ETC / namespace if namespace else None
    for path in sorted(netns_files.iterdir()) if netns_files and netns_files.is_dir() else []:
        if any(_covers(d, PurePosixPath("/etc", path.name)) for d in covered):
            lines.append(f"mount --bind {q(str(path))} {q('/etc/' + path.name)}")
    for source, target in mounts:
        lines.append(f"mkdir -p {q(target)}")
        lines.append(f"mount --bind {q(str(source))} {q(target)}")
    lines.append(f"exec {command}")
    return "\n".join(lines)
