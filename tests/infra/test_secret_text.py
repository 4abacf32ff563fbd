"""Passwords with JAAS-special characters: quoted where the program writes them, refused (naming
the secret key) where a reader cannot carry them. The real logins are on the kafka tier (the
secured KRaft cluster and the ZooKeeper ensemble run on such passwords, tests/kafka/conftest.py);
here, what the program hands Kubernetes."""

from __future__ import annotations

import re
from typing import Any

import pytest

from infra import render
from infra.errors import ConfigError
from infra.model import secret_text
from infra.model.cluster import ClusterModel
from infra.model.declared import SecretValue
from infra.model.desired import desired_state
from tests.infra.conftest import config_of

SPECIAL = "pa\"ss\\word $HOME 'x' =y"
ZOOKEEPER = {"kafka_version": "3.9.1", "quorum": {"kind": "zookeeper", "nodes": 3}}
GRANTS = [{"user": "admin", "resource": "topic", "name": "t", "operations": ["Read"]}]


def secret_files(environment: str, passwords: dict[str, str], **overrides: Any) -> dict[str, Any]:
    objects = render.manifests(config_of(environment, **overrides), passwords)
    return {name: obj["stringData"] for (kind, name), obj in objects.items() if kind == "Secret"}


def test_a_jaas_value_escapes_backslash_quote_and_line_breaks() -> None:
    assert secret_text.jaas_quoted('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_a_properties_value_escapes_backslash_and_everything_beyond_ascii() -> None:
    assert secret_text.properties_escaped("a\\b é\t😀") == "a\\\\b \\u00e9\\u0009\\ud83d\\ude00"


def test_the_zookeeper_logins_carry_a_password_with_quotes_and_backslashes() -> None:
    files = secret_files("dev", {"password-zookeeper": SPECIAL}, **ZOOKEEPER)
    jaas = files["kafka-zookeeper-jaas"]
    quoted = '"pa\\"ss\\\\word $HOME \'x\' =y"'
    assert f"user_kafka={quoted};" in jaas["server.conf"]
    assert f"password={quoted};" in jaas["client.conf"]


def test_the_acl_jobs_admin_login_carries_a_password_with_quotes_and_backslashes() -> None:
    security = {"users": ["admin"], "authorization": True, "acls": GRANTS}
    files = secret_files("prod", {"password-admin": SPECIAL}, security=security)
    properties = files["kafka-admin-client"]["admin.properties"]
    # JAAS escapes, then the .properties file's own backslash escape on top.
    assert 'password="pa\\\\"ss\\\\\\\\word $HOME \'x\' =y";' in properties
    assert files["kafka-user-admin"]["password"] == SPECIAL  # clients get it as it is


def secret_values(environment: str, **overrides: Any) -> list[SecretValue]:
    """Every secret the stack's objects take from config, as the program receives them."""
    model = ClusterModel.from_config(config_of(environment, **overrides))
    found: list[SecretValue] = []

    def walk(value: Any) -> None:
        if isinstance(value, SecretValue):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for concern in desired_state(model):
        for obj in concern.objects:
            walk(obj.manifest)
    return found


@pytest.mark.parametrize(
    ("environment", "overrides", "key", "password", "found"),
    [
        ("dev", ZOOKEEPER, "password-zookeeper", "a${user.home}", "'${'"),
        ("prod", {}, "password-admin", "a,b", "','"),
        ("prod", {}, "password-controller", "a${user.home}", "'${'"),
        ("dev", ZOOKEEPER, "password-admin", "a]b", "']'"),
        ("dev", ZOOKEEPER, "password-admin", " ab", "whitespace"),
    ],
)
def test_a_password_its_readers_cannot_carry_is_refused_naming_the_key(
    environment: str, overrides: dict[str, Any], key: str, password: str, found: str
) -> None:
    # Where the program receives the secret (kafka_cluster: `secret.apply(value.value)`).
    values = [v for v in secret_values(environment, **overrides) if v.key == key]
    assert values, f"the stack takes {key} from secret config"
    for value in values:
        with pytest.raises(ConfigError) as refused:
            value.value(password)
        message = str(refused.value)
        assert f"kafkastack:{key}" in message and found in message
        assert f"pulumi config set --secret kafkastack:{key}" in message
        assert password not in message  # never echo a secret


def test_the_java_tools_log_in_as_the_admin_client_does() -> None:
    # A password with a quote and a backslash: JAAS reads `\"` and `\\` inside its quotes, and
    # the .properties file, read first, takes every backslash as an escape of its own, so each
    # is doubled again (the file once carried `p\"w`, which Java read as `p"w` and the JAAS
    # parser then as the password `p` followed by a key `w`; tests/kafka/test_growth.py runs
    # `kafkastack rebalance` and `drain` with such a password on real brokers).
    text = secret_text.java_login_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "admin",
            "sasl.password": 'p"w\\x',
            "ssl.ca.location": "/tls/ca.crt",
        }
    )
    assert "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" in text
    assert (
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="admin" password="p\\\\"w\\\\\\\\x";'
    ) in text
    assert "ssl.truststore.type=PEM\nssl.truststore.location=/tls/ca.crt\n" in text


def test_a_login_the_java_tools_cannot_carry_is_refused_naming_the_setting() -> None:
    certificate = {
        "security.protocol": "SSL",
        "ssl.ca.location": "/tls/ca.crt",
        "ssl.certificate.location": "/tls/tls.crt",
        "ssl.key.location": "/tls/tls.key",
    }
    with pytest.raises(ConfigError, match=re.escape("ssl.certificate.location, ssl.key.location")):
        secret_text.java_login_properties(certificate)
    kerberos = {"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.username": "a"}
    with pytest.raises(ConfigError, match=re.escape("sasl.mechanism=GSSAPI")):
        secret_text.java_login_properties(kerberos)


def test_a_login_without_a_mechanism_is_the_stacks_scram() -> None:
    # Java's default is GSSAPI, which the SCRAM login module below it would contradict.
    text = secret_text.java_login_properties({"sasl.username": "a", "sasl.password": "b"})
    assert "sasl.mechanism=SCRAM-SHA-512\n" in text and "ScramLoginModule" in text
    # Java knows the mechanisms by their upper-case names only.
    lower = {"sasl.mechanism": "plain", "sasl.username": "a", "sasl.password": "b"}
    text = secret_text.java_login_properties(lower)
    assert "sasl.mechanism=PLAIN\n" in text and "PlainLoginModule" in text


def test_a_value_that_starts_with_a_space_keeps_it() -> None:
    # Properties.load skips the whitespace that starts a value unless it is escaped.
    assert secret_text.properties_escaped(" a b ") == "\\ a b "
