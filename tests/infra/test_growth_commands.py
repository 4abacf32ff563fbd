"""`kafkastack rebalance` / `drain`: bad arguments are refused naming the option, and the Java
tools get the same login as the admin client."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from infra.growth.tools import java_properties
from kafkastack.cli import app


def test_drain_refuses_broker_ids_that_are_not_numbers() -> None:
    result = CliRunner().invoke(
        app, ["drain", "--stack", "dev", "--brokers", "3,four", "--bootstrap", "b:9092"]
    )
    assert result.exit_code == 2
    assert "--brokers '3,four': give broker ids separated by commas" in result.output


def test_a_client_config_line_without_equals_is_refused(tmp_path: Path) -> None:
    login = tmp_path / "login.properties"
    login.write_text("security.protocol=SASL_SSL\nsasl.username admin\n")
    result = CliRunner().invoke(
        app,
        ["rebalance", "--stack", "dev", "--bootstrap", "b:9092", "--client-config", str(login)],
    )
    assert result.exit_code == 2
    assert "'sasl.username admin' is not key=value" in result.output


def test_the_java_tools_log_in_as_the_admin_client_does() -> None:
    text = java_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "admin",
            "sasl.password": 'p"w',
            "ssl.ca.location": "/tls/ca.crt",
        }
    )
    assert "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" in text
    assert (
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="admin" password="p\\"w";'
    ) in text
    assert "ssl.truststore.type=PEM\nssl.truststore.location=/tls/ca.crt\n" in text
