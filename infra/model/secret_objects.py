"""The stack's Secrets: SCRAM users, ZooKeeper's and the controllers' logins and the admin Jobs'
client config, each value taken by the program from secret stack config (`SecretValue`), never
from the render."""

from __future__ import annotations

from infra.config import CONTROLLER_PASSWORD_KEY, ZOOKEEPER_PASSWORD_KEY, password_config_key
from infra.model import admin_client, controller_login, secret_text, security, zookeeper_auth
from infra.model.cluster import ClusterModel
from infra.model.declared import Declared, SecretValue


def _files_secret(
    model: ClusterModel, logical: str, name: str, files: dict[str, object]
) -> list[Declared]:
    """One Secret of files, its values hidden in the engine's state and outputs too."""
    metadata = {"name": name, "namespace": model.config.namespace}
    return [
        Declared(
            "Secret",
            logical,
            {"metadata": metadata, "stringData": files},
            secret_outputs=("stringData", "data"),
        )
    ]


def _zookeeper_jaas(model: ClusterModel) -> list[Declared]:
    """ZooKeeper's and the brokers' SASL/DIGEST logins, built from secret config."""
    if model.config.quorum.kind != "zookeeper":
        return []
    files: dict[str, object] = {
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
    return _files_secret(model, "zookeeper-jaas", zookeeper_auth.jaas_secret_name(model), files)


def _controller_login(model: ClusterModel) -> list[Declared]:
    """KRaft nodes' SASL/PLAIN login on the CONTROLLER listener, built from secret config."""
    if not controller_login.applies(model):
        return []
    files: dict[str, object] = {
        name: SecretValue(
            CONTROLLER_PASSWORD_KEY,
            template=text,
            form=secret_text.JAAS_FILE,
            refusals=secret_text.JAAS_FILE_REFUSALS,
        )
        for name, text in controller_login.jaas_files(model).items()
    }
    return _files_secret(model, "controller-login", controller_login.secret_name(model), files)


def _admin_client(model: ClusterModel, refusals: tuple[secret_text.Refusal, ...]) -> list[Declared]:
    """The SCRAM admin's client config for the admin Jobs, its password quoted in by the program."""
    admin_key = password_config_key(model.config.security.admin_user)
    files: dict[str, object] = {
        name: SecretValue(admin_key, template, secret_text.JAAS_PROPERTY, refusals)
        for name, template in admin_client.admin_client_files(model).items()
    }
    return _files_secret(model, "admin-client", model.names.admin_client_secret, files)


def secrets(model: ClusterModel) -> list[Declared]:
    logins = _zookeeper_jaas(model) + _controller_login(model)
    if model.config.security.client_auth != "scram-sha-512":
        return logins
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
    return logins + _admin_client(model, scram_refusals) + users
