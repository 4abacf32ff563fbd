"""Entry point `pulumi up` runs (Pulumi.yaml `main: infra/`)."""

from infra.config import from_pulumi
from infra.program import passwords_from_config, provision

config = from_pulumi()
provision(config, passwords_from_config(config))
