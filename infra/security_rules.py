"""The security rules that need the whole stack config: users, grants and listeners that would
leave a cluster open or an ACL dangling. The section's own fields are in
`infra/security_config.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infra.security_config import refuse_security as _refuse

if TYPE_CHECKING:
    from infra.stack_config import StackConfig


def check_security(c: StackConfig) -> None:
    """Listeners, users and grants that would leave a cluster open or an ACL dangling."""
    s = c.security
    if s.admin_user not in s.users:
        raise _refuse(
            "admin_user", f"{s.admin_user!r} is not in security.users; add it or name another"
        )
    taken = {"zookeeper", "zookeeper-quorum"} & set(s.users)
    if c.quorum.kind == "zookeeper" and taken:
        raise _refuse(
            "users",
            f"{sorted(taken)[0]!r} names a ZooKeeper password (password-zookeeper, "
            "password-zookeeper-quorum); call the user something else",
        )
    if c.controller_login and "controller" in s.users:
        raise _refuse(
            "users",
            "'controller' names the KRaft nodes' password on the CONTROLLER listener "
            "(password-controller); call the user something else",
        )
    for grant in s.acls:
        if grant.user not in s.users:
            raise _refuse(
                "acls", f"grant for {grant.user!r}, who is not in security.users; add the user"
            )
    if not (c.small or s.allow_insecure_listeners):
        _refuse_open_listeners(c)
    if c.authorization and not s.replication_tls:
        raise _refuse(
            "replication_tls",
            "authorization needs it: brokers and controllers are super users by their "
            "certificate (and, KRaft, their controller login over TLS); turn it on, or turn "
            "security.authorization off",
        )


def _refuse_open_listeners(c: StackConfig) -> None:
    s = c.security
    insecure = {
        "client_tls": not c.client_tls,
        "replication_tls": not s.replication_tls,
        "authorization": not c.authorization,
    }
    for key, off in insecure.items():
        if off:
            raise _refuse(
                key,
                f"off in {c.environment}: a listener would carry data or credentials unencrypted "
                "or unchecked; remove the setting, or set security.allow_insecure_listeners: true "
                "to accept it",
            )
