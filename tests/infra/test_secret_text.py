"""Passwords with JAAS-special characters: quoted where the program writes them, refused (naming
the secret key) where a reader cannot carry them. The real logins are on the kafka tier (the
secured KRaft cluster and the ZooKeeper ensemble run on such passwords, tests/kafka/conftest.py);
here, what the program hands Kubernetes."""

from __future__ import annotations

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
