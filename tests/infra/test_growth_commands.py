"""`kafkastack rebalance` / `drain`: bad arguments are refused naming the option, the Java
tools get the same login as the admin client, and their failures read as their words."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from infra.errors import ConfigError
from infra.growth.tools import LOG_DIRS, BrokersAbsent, tool_failure
from kafkastack.cli import app
from kafkastack.growth_commands import _client


def test_drain_refuses_broker_ids_that_are_not_numbers() -> None:
    result = CliRunner().invoke(
        app, ["drain", "--stack", "dev", "--brokers", "3,four", "--bootstrap", "b:9092"]
    )
    assert result.exit_code == 2
    assert "--brokers '3,four': give broker ids separated by commas" in result.output


def rebalance_logging_in_with(login: Path, text: str) -> Result:
    """`kafkastack rebalance` with `--client-config` a file holding `text`."""
    login.write_text(text)
    return CliRunner().invoke(
        app,
        ["rebalance", "--stack", "dev", "--bootstrap", "b:9092", "--client-config", str(login)],
    )


def test_a_client_config_line_without_equals_is_refused(tmp_path: Path) -> None:
    login = tmp_path / "login.properties"
    result = rebalance_logging_in_with(login, "security.protocol=SASL_SSL\nsasl.username admin\n")
    assert result.exit_code == 2
    assert "'sasl.username admin' is not key=value" in result.output


def test_a_client_certificate_in_the_client_config_is_refused_naming_the_option(
    tmp_path: Path,
) -> None:
    login = tmp_path / "login.properties"
    result = rebalance_logging_in_with(
        login, "security.protocol=SSL\nssl.key.location=/tls/tls.key\n"
    )
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert f"--client-config {login}: client settings ssl.key.location" in said, said
    assert "log in as the stack's SCRAM admin" in said


def test_a_client_config_value_keeps_its_end_as_written(tmp_path: Path) -> None:
    # A KRaft stack's password may end with a space; the spaces after `=` go, as in Java.
    login = tmp_path / "login.properties"
    login.write_text("sasl.username = admin\nsasl.password= pass word \n", encoding="utf-8")
    assert _client(login) == {"sasl.username": "admin", "sasl.password": "pass word "}


def test_a_tool_that_names_a_broker_not_live_is_told_apart_without_its_stack_frames() -> None:
    # ReassignPartitionsCommand's words for a plan's broker that is not live, as Kafka 4.3.1
    # prints them (pinned against the real jars in tests/kafka/test_growth.py).
    output = (
        "Error: Unknown broker id 99\n"
        "org.apache.kafka.tools.AdminCommandFailedException: Unknown broker id 99\n"
        "\tat org.apache.kafka.tools.reassign.ReassignPartitionsCommand.verifyBrokerIds("
        "ReassignPartitionsCommand.java:928)\n"
        "\tat org.apache.kafka.tools.reassign.ReassignPartitionsCommand.main("
        "ReassignPartitionsCommand.java:147)\n"
    )
    failure = tool_failure("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", output)
    assert isinstance(failure, BrokersAbsent)
    # The exception's own line only repeats the tool's words: one line is left.
    assert str(failure) == "ReassignPartitionsCommand: Error: Unknown broker id 99"
    other = tool_failure(LOG_DIRS, "Error: Authentication failed\n\tat x.Y.z(Y.java:1)\n")
    assert type(other) is ConfigError
    assert str(other) == "LogDirsCommand: Error: Authentication failed"


def test_refusal_words_quoted_inside_another_failure_are_not_a_refusal_safe_to_retry() -> None:
    # A failure after Kafka accepted part of a plan may quote a broker's error; retrying it as
    # a refusal that changed nothing would hand the plan again while moves run.
    output = "Error reassigning partition(s):\norders-0: Error: Unknown broker id 4\n"
    failure = tool_failure("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", output)
    assert type(failure) is ConfigError


def test_wait_and_timeout_that_are_not_seconds_are_refused_naming_the_option() -> None:
    for option, value in (("--wait", "nan"), ("--wait", "-1"), ("--timeout", "inf")):
        result = CliRunner().invoke(
            app, ["rebalance", "--stack", "dev", "--bootstrap", "b:9092", option, value]
        )
        assert result.exit_code == 2, result.output
        assert f"{option} {float(value):g}: give a number of seconds, 0 or more" in result.output


def test_a_throttle_that_is_no_rate_is_refused_naming_the_option() -> None:
    for value in ("inf", "nan", "0", "-5", "1e-7"):
        result = CliRunner().invoke(
            app, ["rebalance", "--stack", "dev", "--bootstrap", "b:9092", "--throttle", value]
        )
        assert result.exit_code == 2, result.output
        assert f"--throttle {float(value):g}: give MB/s of at least 1e-06" in result.output
