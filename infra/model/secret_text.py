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
    """`value` as a `.properties` value that `Properties.load` reads back unchanged (it skips
    the whitespace that starts a value unless escaped)."""
    out = []
    for index, char in enumerate(value):
        if char == " " and index == 0:
            out.append("\\ ")
        elif char == "\\":
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


# The librdkafka settings `java_login_properties` carries over, and the Java names of the few it
# renames; a client certificate (mTLS) is not among them yet.
JAVA_LOGIN_KEYS = {
    "security.protocol": "security.protocol",
    "sasl.mechanism": "sasl.mechanism",
    "sasl.username": "",
    "sasl.password": "",
    "ssl.ca.location": "ssl.truststore.location",
    "ssl.endpoint.identification.algorithm": "ssl.endpoint.identification.algorithm",
}
SASL_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")


def java_login_properties(client: Mapping[str, str]) -> str:
    """A Java client's settings (a .properties file) for a librdkafka login (SCRAM or PLAIN over
    SASL, a PEM CA), for Kafka's Java tools run from this host: the name and password reach
    Kafka as they are, whatever they hold (quoted for JAAS, then escaped for the file). A
    setting it cannot carry over is refused, naming it, rather than left out."""
    others = sorted(set(client) - set(JAVA_LOGIN_KEYS))
    if others:
        raise ConfigError(
            f"client settings {', '.join(others)}: Kafka's Java tools that kafkastack runs take "
            f"only {', '.join(JAVA_LOGIN_KEYS)} (a client certificate is not supported yet: log "
            "in as the stack's SCRAM admin)"
        )
    values = {JAVA_LOGIN_KEYS[k]: v for k, v in client.items() if JAVA_LOGIN_KEYS[k]}
    if "sasl.username" in client:
        # librdkafka and Java both default to GSSAPI; the stacks log in with SCRAM-SHA-512.
        mechanism = values.get("sasl.mechanism", SASL_MECHANISMS[0]).upper()
        values["sasl.mechanism"] = mechanism  # Java's names are upper case only
        if mechanism not in SASL_MECHANISMS:
            raise ConfigError(
                f"client setting sasl.mechanism={mechanism}: kafkastack logs Kafka's Java tools "
                f"in with {', '.join(SASL_MECHANISMS)}"
            )
        module = "org.apache.kafka.common.security.scram.ScramLoginModule"
        if mechanism == "PLAIN":
            module = "org.apache.kafka.common.security.plain.PlainLoginModule"
        user, password = client["sasl.username"], client.get("sasl.password", "")
        values["sasl.jaas.config"] = (
            f"{module} required username={jaas_quoted(user)} password={jaas_quoted(password)};"
        )
    if "ssl.truststore.location" in values:  # a PEM file, which Java reads as it is
        values["ssl.truststore.type"] = "PEM"
        values["ssl.truststore.location"] = values.pop("ssl.truststore.location")
    return "".join(f"{key}={properties_escaped(value)}\n" for key, value in values.items())
