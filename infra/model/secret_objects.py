"""The stack's Secrets: SCRAM users, ZooKeeper's logins and the admin Jobs' client config, each
value taken by the program from secret stack config (`SecretValue`), never from the render."""

from __future__ import annotations

from infra.config import ZOOKEEPER_PASSWORD_KEY, password_config_key
from infra.model import admin_client, secret_text, security, zookeeper_auth
from infra.model.cluster import ClusterModel
from infra.model.declared import Declared, SecretValue


def _zookeeper_jaas(model: ClusterModel) -> list[Declared]:
    """ZooKeeper's and the brokers' SASL/DIGEST logins, built from secret config."""
    if model.config.quorum.kind != "zookeeper":
        return []
    files = {
        name: SecretValue(
            ZOOKEEPER_PASSWORD_KEY,
            template=text,
            form=secret_text.JAAS_FILE,
            refusals=secret_text.JAAS_FILE_REFUSALS,
            others=tuple(
                (slot, key) for slot, key in zookeeper_auth.QUORUM_SLOTS.items() if slot in text
            ),
        )
        for name, text in zookeeper_auth.jaas_files().items()
    }
    metadata = {
        "name": zookeeper_auth.jaas_secret_name(model),
        "namespace": model.config.namespace,
    }
    return [
        Declared(
            "Secret",
            "zookeeper-jaas",
            {"metadata": metadata, "stringData": files},
            secret_outputs=("stringData", "data"),
        )
    ]


def _admin_client(model: ClusterModel, refusals: tuple[secret_text.Refusal, ...]) -> list[Declared]:
    """The SCRAM admin's client config for the admin Jobs, its password quoted in by the program."""
    admin_key = password_config_key(model.config.security.admin_user)
    files = {
        name: SecretValue(admin_key, template, secret_text.JAAS_PROPERTY, refusals)
        for name, template in admin_client.admin_client_files(model).items()
    }
    metadata = {"name": model.names.admin_client_secret, "namespace": model.config.namespace}
    return [
        Declared(
            "Secret",
            "admin-client",
            {"metadata": metadata, "stringData": files},
            secret_outputs=("stringData", "data"),
        )
    ]


def secrets(model: ClusterModel) -> list[Declared]:
    if model.config.security.client_auth != "scram-sha-512":
        return _zookeeper_jaas(model)
    # The init containers seeding SCRAM users hand each password to a Kafka tool.
    scram_refusals = (
        secret_text.ZOOKEEPER_SCRAM_REFUSALS
        if model.config.quorum.kind == "zookeeper"
        else secret_text.KRAFT_SCRAM_REFUSALS
    )
    users = [
        Declared(
            "Secret",
            f"user-{user}",
            {
                "metadata": {
                    "name": security.scram_secret_name(model, user),
                    "namespace": model.config.namespace,
                },
                "stringData": {
                    "username": user,
                    "password": SecretValue(password_config_key(user), refusals=scram_refusals),
                },
            },
            secret_outputs=("stringData", "data"),
        )
        for user in model.config.security.users
    ]
    return _zookeeper_jaas(model) + _admin_client(model, scram_refusals) + users
