"""`zones: auto` discovers zones through boto3 against moto's EC2 on 127.0.0.1."""

from __future__ import annotations

import pytest

from infra.config import parse_stack_config
from infra.errors import ConfigError
from infra.zones import discover_zones
from tests.infra.conftest import base_values

pytestmark = pytest.mark.s3


@pytest.fixture
def ec2(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("KAFKASTACK_EC2_ENDPOINT", moto_endpoint)


def test_auto_zones_are_the_regions_available_zones(ec2: None) -> None:
    zones = discover_zones("eu-west-1")
    assert zones[:3] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    config = parse_stack_config(base_values(zones="auto", region="eu-west-1"), "prod", zones)
    assert config.zones == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]


def test_auto_zones_without_a_region_is_refused() -> None:
    with pytest.raises(ConfigError, match="kafkastack:region: required"):
        discover_zones(None)


def test_unknown_region_is_a_clear_error(ec2: None) -> None:
    with pytest.raises(ConfigError, match="cannot discover zones in xx-nowhere-1"):
        discover_zones("xx-nowhere-1")
