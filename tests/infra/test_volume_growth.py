"""A larger volume grows the existing claims in place; the StatefulSets stay as created."""

from __future__ import annotations

from typing import Any

from infra.model.cluster import ClusterModel
from infra.model.declared import Declared
from infra.model.desired import desired_state
from tests.infra.conftest import config_of


def objects(**overrides: Any) -> dict[tuple[str, str], Declared]:
    model = ClusterModel.from_config(config_of(**overrides))
    return {(o.kind, o.logical): o for c in desired_state(model) for o in c.objects}


def test_every_claim_of_every_node_is_patched_at_its_template_size() -> None:
    declared = objects(storage={"size_gib": 4000})
    for (kind, name), workload in declared.items():
        if kind != "StatefulSet":
            continue
        templates = workload.manifest["spec"]["volumeClaimTemplates"]
        for template in templates:
            claim = f"{template['metadata']['name']}-{name}-0"  # the controller's name for it
            patch = declared[("PersistentVolumeClaimPatch", claim)]
            assert patch.manifest["spec"] == template["spec"]
            # The controller that created the claim owns its size too: the patch takes it over;
            # and nothing awaits a claim's phase (a Bound claim would stall the first `up`).
            assert patch.manifest["metadata"]["annotations"] == {
                "pulumi.com/patchForce": "true",
                "pulumi.com/skipAwait": "true",
            }
            assert (
                patch.manifest["metadata"]["namespace"]
                == workload.manifest["metadata"]["namespace"]
            )
            # Created once the StatefulSet exists; destroy leaves the claim alone.
            assert name in patch.after and patch.retain_on_delete
        # The engine keeps the deployed template sizes: a change there would replace it.
        assert workload.ignore_changes == tuple(
            f"spec.volumeClaimTemplates[{i}].spec.resources.requests.storage"
            for i in range(len(templates))
        )


def test_a_larger_size_changes_only_the_claims_sizes() -> None:
    before, after = objects(storage={"size_gib": 4000}), objects(storage={"size_gib": 5000})
    assert before.keys() == after.keys()
    grown = {
        key[1]
        for key in before
        if key[0] == "PersistentVolumeClaimPatch" and before[key] != after[key]
    }
    assert grown == {f"data-0-kafka-broker-{b}-0" for b in range(3)}
    for key in grown:
        size = after[("PersistentVolumeClaimPatch", key)].manifest["spec"]["resources"]
        assert size == {"requests": {"storage": "5000Gi"}}
