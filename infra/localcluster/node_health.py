"""What the real nodes looked like when a proof failed: the report a failing test of the nodes
tier carries (tests/nodes/conftest.py), so a CI log says whether a node was under pressure, out
of disk or not Ready, and what its kubelet said about evictions and images, instead of only the
error of the step that noticed it later (a pod in ErrImagePull, a `pulumi up` timed out)."""

from __future__ import annotations

import json
import re

from infra.localcluster.node_disk import GIB, free_bytes
from infra.localcluster.nodes import RealNodes

# Kubelet log lines worth a failed proof's report: evictions, image collection, a full disk
# (not the eviction manager's start-up lines, which every kubelet logs).
TELLING = re.compile(
    r"attempting to reclaim|evict(ed|ing)\b|must evict|image_gc_manager|garbage collect"
    r"|DiskPressure|MemoryPressure|no space left",
    re.IGNORECASE,
)
LINES_PER_NODE = 6


def diagnosis(nodes: RealNodes) -> str:
    """A few lines per node: its conditions that are not as they should be, and its kubelet's
    telling log lines; first the free disk under the nodes' folder."""
    lines = [f"free disk under {nodes.folder}: {free_bytes(nodes.folder) / GIB:.1f} GiB"]
    reply = nodes.kube.kubectl("get", "nodes", "-o", "json")
    items = json.loads(reply.stdout)["items"] if reply.returncode == 0 else []
    conditions = {
        i["metadata"]["name"]: {
            c["type"]: c["status"] for c in i.get("status", {}).get("conditions", [])
        }
        for i in items
    }
    for node in nodes.specs:
        found = conditions.get(node.name)
        if found is None:
            state = "no Node object"
        else:
            wrong = [t for t, s in found.items() if (s == "True") != (t == "Ready")]
            state = ", ".join(f"{t}={found[t]}" for t in wrong) or "Ready, no pressure"
        lines.append(f"{node.name}: {state}")
        try:
            log = (node.dir / "kubelet.log").read_text(errors="replace").splitlines()
        except OSError:
            continue
        telling = [line[:300] for line in log if TELLING.search(line)]
        lines += [f"  {line}" for line in telling[-LINES_PER_NODE:]]
    return "\n".join(lines)
