"""HAProxy started from the rendered haproxy.cfg in its own network namespace."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from infra.verify.errors import VerifyError
from infra.verify.network import Host


def start_haproxy(
    render_dir: Path, topology: dict[str, Any], host: Host, workdir: Path
) -> subprocess.Popen[bytes]:
    """HAProxy listening on its rendered port; VerifyError with its log when it does not."""
    config = render_dir / str(topology["external"]["haproxy_config"])
    log_path = workdir / "haproxy.log"
    log = log_path.open("ab")
    command = ["ip", "netns", "exec", host.namespace, "haproxy", "-db", "-f", str(config)]
    process = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    port = topology["ports"]["haproxy"]
    deadline = time.monotonic() + 30
    while not host.listening(port):
        if process.poll() is not None:  # exited: a config error
            raise VerifyError(f"haproxy exited: {log_path.read_text()[-1500:]}")
        if time.monotonic() > deadline:
            raise VerifyError(f"haproxy did not listen on :{port} within 30 s")
        time.sleep(0.2)
    return process
