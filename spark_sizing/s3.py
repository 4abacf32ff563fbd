"""S3 through boto3: list and fetch input objects, upload outputs.

The endpoint comes from the standard AWS settings, plus `KAFKASTACK_S3_ENDPOINT` (or
`AWS_ENDPOINT_URL_S3`) for S3-compatible stores and the tests' moto server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import boto3


class S3Error(RuntimeError):
    """An S3 location that cannot be used; the message names it and the fix."""


def is_s3(location: str) -> bool:
    return location.startswith(("s3://", "s3a://"))


def split_url(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise S3Error(f"{url}: no bucket name; write s3://BUCKET/PREFIX")
    return bucket, prefix


def client() -> Any:
    endpoint = os.environ.get("KAFKASTACK_S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL_S3")
    return boto3.client("s3", endpoint_url=endpoint)


def download_prefix(url: str, target: Path) -> list[Path]:
    """Every object under the prefix, mirrored below `target`."""
    bucket, prefix = split_url(url)
    s3 = client()
    files: list[Path] = []
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            for obj in page.get("Contents", []):
                key = obj["Key"]
                if key.endswith("/"):
                    continue
                local = target / key
                local.parent.mkdir(parents=True, exist_ok=True)
                s3.download_file(bucket, key, str(local))
                files.append(local)
    except s3.exceptions.NoSuchBucket:
        raise S3Error(f"{url}: bucket {bucket!r} does not exist; check the URL") from None
    except Exception as err:  # botocore raises many kinds; all mean "cannot read this".
        if isinstance(err, S3Error):
            raise
        raise S3Error(
            f"{url}: cannot list or read objects ({err}); check credentials and endpoint"
        ) from None
    if not files:
        raise S3Error(f"{url}: no objects under this prefix; check the bucket and prefix")
    return files


def upload_tree(source: Path, url: str) -> None:
    """Every file below `source` to the prefix, keeping relative paths."""
    bucket, prefix = split_url(url)
    s3 = client()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        key = "/".join(
            part for part in (prefix.rstrip("/"), path.relative_to(source).as_posix()) if part
        )
        try:
            s3.upload_file(str(path), bucket, key)
        except Exception as err:
            raise S3Error(
                f"{url}: cannot write {key} ({err}); check the bucket and credentials"
            ) from None
