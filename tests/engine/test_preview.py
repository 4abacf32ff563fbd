"""Pull-request previews from the real engine: the base revision deployed into a throwaway
backend (provider render mode), the head previewed against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import Project

pytestmark = pytest.mark.engine


def test_growing_brokers_through_apply_sizing_previews_as_additions_only(
    project: Project, tmp_path: Path
) -> None:
    project.apply_sizing("staging", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    base = project.commit("three brokers")
    project.apply_sizing("staging", tmp_path, brokers=5, brokers_per_zone=[2, 2, 1])
    code, comment = project.preview("staging", base)
    assert code == 0, comment
    assert "| brokers | 3 | 5 |" in comment
    assert "| create | StatefulSet | kafka-broker-4 |" in comment
    assert "| create | StatefulSet | kafka-broker-3 |" in comment
    assert "| replace |" not in comment and "| delete |" not in comment
    assert "data-loss risk" not in comment
    # Kafka leaves existing partitions where they are: the comment names the step that is due.
    assert "**Brokers 3 → 5**" in comment and "kafkastack rebalance --stack staging" in comment


def test_a_program_change_that_replaces_brokers_is_flagged(
    project: Project, tmp_path: Path
) -> None:
    # The stack file does not change at all: only the code does. A render of the head alone
    # cannot see this; the engine compares the head's program with the deployed state.
    project.apply_sizing("staging", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    base = project.commit("three brokers")
    project.edit_code(
        "infra/model/workloads.py",
        '"podManagementPolicy": "Parallel"',
        '"podManagementPolicy": "OrderedReady"',
    )
    code, comment = project.preview("staging", base)
    assert code == 3, comment  # a pipeline gating on the preview stops here
    assert "| replace | StatefulSet | kafka-broker-0 |" in comment
    assert "⚠ data-loss risk" in comment
    assert "Sizing unchanged." in comment


def test_shrinking_brokers_and_moving_storage_are_flagged(project: Project, tmp_path: Path) -> None:
    project.apply_sizing("staging", tmp_path, brokers=5, brokers_per_zone=[2, 2, 1])
    base = project.commit("five brokers")
    project.apply_sizing("staging", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    project.edit_stack("staging", storage={"provisioner": "pd.csi.storage.gke.io"})
    code, comment = project.preview("staging", base)
    assert code == 3, comment
    assert "| delete | StatefulSet | kafka-broker-4 |" in comment
    assert "| replace | StorageClass | kafka-broker-fast |" in comment
    assert "Data-loss risk" in comment


def test_an_unchanged_checkout_previews_no_changes(project: Project) -> None:
    code, comment = project.preview("staging", "HEAD")
    assert code == 0, comment
    assert "No object changes." in comment and "Sizing unchanged." in comment


def test_a_larger_volume_updates_the_claims_in_place(project: Project, tmp_path: Path) -> None:
    # The claim templates of a StatefulSet are immutable: a size change there would replace
    # every broker. The preview must show the claims growing and the workloads untouched.
    project.apply_sizing("staging", tmp_path, brokers=3, brokers_per_zone=[1, 1, 1])
    project.edit_stack("staging", storage={"provisioner": "ebs.csi.aws.com", "size_gib": 12000})
    base = project.commit("12000 GiB per broker")
    project.edit_stack("staging", storage={"provisioner": "ebs.csi.aws.com", "size_gib": 14000})
    code, comment = project.preview("staging", base)
    assert code == 0, comment
    for broker in range(3):
        claim = f"data-0-kafka-broker-{broker}-0"
        assert f"| update | PersistentVolumeClaimPatch | {claim} |" in comment, comment
    assert "| replace |" not in comment and "| delete |" not in comment, comment
    assert "StatefulSet" not in comment, comment  # nothing about the workloads changes
    assert "data-loss risk" not in comment


def test_a_change_of_how_the_nodes_talk_to_each_other_is_flagged_as_unable_to_roll(
    project: Project,
) -> None:
    # The base deployed CONTROLLER with client certificates (mTLS), as kafkastack rendered it
    # before the controller login; the head logs in there with SASL/PLAIN over TLS.
    login = "infra/model/controller_login.py"
    project.edit_code(login, "return model.config.controller_login", "return False")
    base = project.commit("nodes present certificates on CONTROLLER")
    project.edit_code(login, "return False", "return model.config.controller_login")
    code, comment = project.preview("staging", base)
    assert code == 3, comment  # a pipeline gating on the preview stops here
    assert "**This change cannot roll**" in comment, comment
    assert "> - CONTROLLER: SSL → SASL_SSL (`kafka-broker-0-config`" in comment, comment
    assert "data-loss risk" not in comment  # the objects update in place; the roll is the risk


def test_a_head_that_fails_the_projects_strict_typecheck_is_refused(project: Project) -> None:
    # Pulumi.yaml runs mypy before the program, with the project's settings (strict): a
    # function without annotations passes a lenient check and must not pass this one.
    future = "from __future__ import annotations\n"
    project.edit_code(
        "infra/model/paths.py", future, f"{future}\n\ndef untyped(value):\n    return value\n"
    )
    code, comment = project.preview("staging", "HEAD")
    assert code == 2, comment  # an error (kafkastack's one line), not a flagged preview (3)
    assert "paths.py" in comment and "missing a type annotation" in comment, comment
