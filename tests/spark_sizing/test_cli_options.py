"""`kafkastack size` refuses a bad option before Spark starts, naming the option it came from."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkastack import sizing_commands
from kafkastack.cli import app
from spark_sizing.job import SAMPLE_INPUT
from spark_sizing.model_inputs import SizingParameters
from spark_sizing.profiles import ProfileError, load_profile

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(**_: object) -> None:
        raise AssertionError("Spark must not start for an option that can be refused at once")

    monkeypatch.setattr("spark_sizing.job.spark_session", refuse)


def size(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["size", "--input", str(SAMPLE_INPUT), *args])
    return result.exit_code, result.output


def float_options() -> list[str]:
    """Every float option `size` has, found from its signature: one added later is covered
    without touching this test."""
    hints = typing.get_type_hints(sizing_commands.size)
    return [
        "--" + name.replace("_", "-")
        for name, hint in hints.items()
        if hint in (float, float | None)
    ]


def test_the_float_options_are_found() -> None:
    assert {"--recovery-hours", "--peak-factor", "--s3a-threshold-mib"} <= set(float_options())


@pytest.mark.parametrize("option", float_options())
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_every_float_option_refuses_a_non_finite_value(
    option: str, value: str, tmp_path: Path
) -> None:
    code, output = size("--out", str(tmp_path), option, value)
    assert code == 2, output
    # An option with a minimum (--s3a-threshold-mib) may refuse -inf and nan by its range,
    # in typer's own words.
    assert f"{option} {float(value)}: not a finite number" in output or (
        "Invalid value for" in output and value != "inf"
    )
    assert not any(tmp_path.iterdir())


def test_the_refusal_is_one_line_naming_the_option(tmp_path: Path) -> None:
    code, output = size("--out", str(tmp_path), "--recovery-hours", "inf")
    assert code == 2
    assert output == (
        "kafkastack: --recovery-hours inf: not a finite number; give a number such as 2.5\n"
    )


def test_the_model_refuses_non_finite_knobs_too() -> None:
    with pytest.raises(ValueError, match="finite number"):
        SizingParameters(recovery_hours=float("inf"))


def test_a_missing_candidate_profile_names_its_option(tmp_path: Path) -> None:
    code, output = size(
        "--out", str(tmp_path), "--profile", "auto", "--candidate-profile", "x.yaml"
    )
    assert code == 2
    assert "--candidate-profile 'x.yaml': not a built-in profile nor a YAML file" in output
    assert "--profile 'x.yaml'" not in output


def test_a_profile_file_with_an_infinite_figure_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fast.yaml"
    path.write_text(
        "cpu: 8\nmemory_gib: 32\ndisk_mb_s: .inf\ndisk_iops: 3000\nnetwork_mb_s: 300\n"
        "max_disk_gib: 1000\n"
    )
    with pytest.raises(ProfileError, match=r"--candidate-profile .*'disk_mb_s': .*finite"):
        load_profile(str(path), "--candidate-profile")
