"""What the model declares: one Kubernetes object (`Declared`), a group of them that Pulumi
creates as one component (`Concern`), and a value only secret stack config holds (`SecretValue`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infra.model import secret_text


@dataclass(frozen=True)
class SecretValue:
    """A value the program takes from secret stack config (`kafkastack:<key>`), never from here."""

    key: str
    # When set, the value is this text with the secret, quoted for `form` (see secret_text), in
    # place of `{password}`: a JAAS file, a client's properties.
    template: str = ""
    form: str = ""
    # What the secret's readers cannot carry: refused when the program receives the secret.
    refusals: tuple[secret_text.Refusal, ...] = ()
    # Further secrets the template holds, as (slot, key): ZooKeeper's quorum login.
    others: tuple[tuple[str, str], ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """The secret keys, in the order `value` takes their values."""
        return (self.key, *(key for _, key in self.others))

    def value(self, *secrets: str) -> str:
        """What Kubernetes receives, given the values of `keys` from stack config."""
        for key, secret in zip(self.keys, secrets, strict=True):
            secret_text.check(key, secret, self.refusals)
        if not self.template:
            return secrets[0]
        text = secret_text.fill(self.template, self.form, secrets[0])
        for (slot, _), secret in zip(self.others, secrets[1:], strict=True):
            text = secret_text.fill(text, self.form, secret, slot)
        return text


@dataclass(frozen=True)
class Declared:
    """One Kubernetes object: `kind`, a logical name unique in its concern, the manifest."""

    kind: str
    logical: str
    manifest: dict[str, Any]
    protect: bool = False  # stateful: `pulumi destroy` or a replacement stops (prod)
    retain_on_delete: bool = False  # `pulumi destroy` forgets it instead of deleting it
    secret_outputs: tuple[str, ...] = ()  # fields the state keeps encrypted
    # Logical names of objects of the same concern that Pulumi creates or updates (and, unless
    # skip_await, waits to be ready) before this one: what makes a roll one node at a time.
    after: tuple[str, ...] = ()
    # Input paths whose deployed value the engine keeps (what a later change must not replace).
    ignore_changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Concern:
    key: str  # how other concerns refer to it in `after`
    type_token: str  # the Pulumi component type
    objects: tuple[Declared, ...]
    after: tuple[str, ...] = ()  # concerns whose objects must exist before these are created
    outputs: dict[str, Any] = field(default_factory=dict)
