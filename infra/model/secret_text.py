"""How a password from secret stack config is written into the text that carries it, and what
that text's reader cannot carry: the one home for quoting secrets.

A password reaches Kafka and ZooKeeper through parsers with rules of their own:
- a JAAS login (a ZooKeeper login file, a client's `sasl.jaas.config`) is tokenized by Java's
  `StreamTokenizer`: inside `"…"`, a backslash starts an escape and a line break ends the string,
  so `\\`, `"` and line breaks are escaped here;
- a `.properties` file (`java.util.Properties.load`, read as ISO-8859-1) takes a backslash as an
  escape too, and anything beyond ASCII only as `\\uXXXX`;
- a JAAS *file* also expands `${name}` as a Java system property (the JDK's login config), and
  Kafka's SCRAM tools split their `[name=…,password=…]` argument at characters no escape protects.
What no escape can carry is refused before anything is applied, naming the secret key and the fix.
The Java tools kafkastack runs from an operator's host (rebalance, drain, calibrate) get their
login the same way (`java_login_properties`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from infra.config import NAMESPACE
from infra.errors import ConfigError

# Where a template puts the password (see `fill`).
PASSWORD_SLOT = "{password}"


@dataclass(frozen=True)
class Refusal:
    """Text a reader of the password cannot carry, and which reader."""

    text: str
    reader: str


# The JDK's JAAS login file (ZooKeeper's and the brokers' logins in ZooKeeper mode).
JAAS_FILE_REFUSALS = (
    Refusal("${", "a JAAS login file (the JDK expands ${...} there as a system property)"),
)
# `kafka-storage.sh format --add-scram 'SCRAM-SHA-512=[name=…,password=…]'` (KRaft): the list
# is split at every comma, quotes or not.
KRAFT_SCRAM_REFUSALS = (
    Refusal(",", "kafka-storage.sh --add-scram (it splits [name=...,password=...] at commas)"),
)
# `kafka-configs.sh --zookeeper --add-config 'SCRAM-SHA-512=[password=…]'` (ZooKeeper mode):
# brackets are stripped wherever they are, and the value's pattern stops at a line break.
ZOOKEEPER_SCRAM_REFUSALS = (
    Refusal("[", "kafka-configs.sh --add-config (it removes every [ and ])"),
    Refusal("]", "kafka-configs.sh --add-config (it removes every [ and ])"),
    Refusal("\n", "kafka-configs.sh --add-config (a password ends at a line break)"),
    Refusal("\r", "kafka-configs.sh --add-config (a password ends at a line break)"),
)


def jaas_quoted(value: str) -> str:
    """`value` as one quoted JAAS option value, whatever it holds."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def properties_escaped(value: str) -> str:
    """`value` as a `.properties` value that `Properties.load` reads back unchanged."""
    out = []
    for char in value:
        if char == "\\":
            out.append("\\\\")
        elif " " <= char <= "~":
            out.append(char)
        else:  # control characters and non-ASCII, as UTF-16 code units
            units = char.encode("utf-16-be")
            out += [f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)]
    return "".join(out)


def check(key: str, secret: str, refusals: tuple[Refusal, ...]) -> None:
    """ConfigError naming the secret key when `secret` holds what one of its readers cannot
    carry (checked where the program receives the secret, never printing it)."""
    for refusal in refusals:
        if refusal.text in secret:
            raise ConfigError(
                f"{NAMESPACE}:{key}: the password contains {refusal.text!r}, which "
                f"{refusal.reader} cannot carry; set another with "
                f"`pulumi config set --secret {NAMESPACE}:{key} ...`"
            )
    if refusals is ZOOKEEPER_SCRAM_REFUSALS and secret != secret.strip():
        raise ConfigError(
            f"{NAMESPACE}:{key}: the password starts or ends with whitespace, which "
            "kafka-configs.sh --add-config trims; set another with "
            f"`pulumi config set --secret {NAMESPACE}:{key} ...`"
        )


JAAS_FILE = "jaas-file"  # the password as a quoted value in a JAAS login file
JAAS_PROPERTY = "jaas-property"  # the same inside a `sasl.jaas.config=` line of a .properties


def fill(template: str, form: str, secret: str, slot: str = PASSWORD_SLOT) -> str:
    """`template` with the password, quoted for `form`, in place of `slot`."""
    quoted = jaas_quoted(secret)
    if form == JAAS_PROPERTY:
        quoted = properties_escaped(quoted)
    elif form != JAAS_FILE:
        raise ValueError(f"unknown secret form {form!r}")
    return template.replace(slot, quoted)


def java_login_properties(client: Mapping[str, str]) -> str:
    """A Java client's settings (a .properties file) for a librdkafka login (SCRAM or PLAIN over
    SASL, a PEM CA), for Kafka's Java tools run from this host: the name and password reach
    Kafka as they are, whatever they hold (quoted for JAAS, then escaped for the file)."""
    values: dict[str, str] = {
        k: client[k] for k in ("security.protocol", "sasl.mechanism") if k in client
    }
    if "sasl.username" in client:
        user, password = client["sasl.username"], client.get("sasl.password", "")
        module = "org.apache.kafka.common.security.scram.ScramLoginModule"
        if client.get("sasl.mechanism", "").upper() == "PLAIN":
            module = "org.apache.kafka.common.security.plain.PlainLoginModule"
        values["sasl.jaas.config"] = (
            f"{module} required username={jaas_quoted(user)} password={jaas_quoted(password)};"
        )
    if "ssl.ca.location" in client:
        values["ssl.truststore.type"] = "PEM"
        values["ssl.truststore.location"] = client["ssl.ca.location"]
    return "".join(f"{key}={properties_escaped(value)}\n" for key, value in values.items())
