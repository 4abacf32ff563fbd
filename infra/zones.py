"""`zones: auto`: the region's available zones from AWS (boto3 `describe_availability_zones`)."""

from __future__ import annotations

import os

from infra.errors import ConfigError


def discover_zones(region: str | None) -> list[str]:
    if not region:
        raise ConfigError("kafkastack:region: required when zones is 'auto'; set the AWS region")
    endpoint = os.environ.get("KAFKASTACK_EC2_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL_EC2")
    # Imported here: boto3 costs half a second of CPU to import, and every engine command and
    # CLI call imports this module while only `zones: auto` asks AWS.
    import boto3

    ec2 = boto3.client("ec2", region_name=region, endpoint_url=endpoint)
    try:
        reply = ec2.describe_availability_zones(
            Filters=[
                {"Name": "state", "Values": ["available"]},
                {"Name": "zone-type", "Values": ["availability-zone"]},
            ]
        )
    except Exception as err:  # botocore's error family; all mean the same to the user
        raise ConfigError(
            f"kafkastack:zones: cannot discover zones in {region} ({err}); "
            "check AWS credentials or list the zones"
        ) from None
    zones = sorted(z["ZoneName"] for z in reply["AvailabilityZones"])
    if not zones:
        raise ConfigError(f"kafkastack:zones: {region} reports no available zones; list them")
    return zones
