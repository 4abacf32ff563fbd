"""The local control plane's own settings, as its real components run them."""

from __future__ import annotations

import pytest

from infra.localcluster.control_plane import LocalKubernetes

pytestmark = pytest.mark.cluster


def test_the_single_controller_manager_and_scheduler_renew_no_leader_lease(
    kube: LocalKubernetes,
) -> None:
    """Each runs once, so a leader election only costs its lease's renewal every 2 s (an
    apiserver write to etcd each) for the cluster's whole life. Both still do their work: the
    scheduler places and the controllers make the pods of every other test of this tier."""
    leases = kube.kubectl("get", "leases", "-n", "kube-system", "-o", "name").stdout.split()
    held = {name.split("/", 1)[1] for name in leases}
    assert any(name.startswith("apiserver-") for name in held), held  # the apiserver's own
    assert not held & {"kube-controller-manager", "kube-scheduler"}, held
