"""Entry point `pulumi up` runs (Pulumi.yaml `main: infra/`)."""

from infra.config import from_pulumi
from infra.program import provision, secrets_from_config

config = from_pulumi()
provision(config, secrets_from_config(config))
