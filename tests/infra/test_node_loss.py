"""How the node-loss proof (infra/localcluster/node_loss.py) tells that the control plane has
taken a lost node's pods out of its Services; the proof itself runs on real nodes."""

from __future__ import annotations

from infra.localcluster.node_loss import endpoint_serving


def test_a_not_ready_pod_behind_a_service_publishing_not_ready_addresses_is_not_serving() -> None:
    # What the brokers' headless Service showed for the lost node's broker (2026-11-26).
    headless = {"ready": True, "serving": False, "terminating": False}
    assert not endpoint_serving({"conditions": headless})
    assert endpoint_serving({"conditions": {"ready": True, "serving": True}})
    assert not endpoint_serving({"conditions": {"ready": False}})  # no `serving`: as ready says
