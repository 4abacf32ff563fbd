"""S3 through boto3: list input objects, fetch them or their first line, upload outputs.

The endpoint comes from the standard AWS settings, plus `KAFKASTACK_S3_ENDPOINT` (or
`AWS_ENDPOINT_URL_S3`) for S3-compatible stores and the tests' moto server. Spark's s3a reader
(`spark_sizing/s3a.py`) takes the same settings, so listing and reading reach the same store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

# Enough for any header row; a longer first line is fetched in further ranges.
_HEADER_RANGE = 64 * 1024


class S3Error(RuntimeError):
    """An S3 location that cannot be used; the message names it and the fix."""


@dataclass(frozen=True)
class S3Object:
    bucket: str
    key: str
    size: int

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    @property
    def s3a_url(self) -> str:
        return f"s3a://{self.bucket}/{self.key}"


def is_s3(location: str) -> bool:
    return location.startswith(("s3://", "s3a://"))


def split_url(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise S3Error(f"{url}: no bucket name; write s3://BUCKET/PREFIX")
    return bucket, prefix


def endpoint(env: Mapping[str, str] = os.environ) -> str | None:
    """The S3-compatible endpoint to use instead of AWS's, if any."""
    return env.get("KAFKASTACK_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL_S3") or None


def client() -> Any:
    return boto3.client("s3", endpoint_url=endpoint())


def list_prefix(url: str) -> list[S3Object]:
    """Every object under the prefix (folder markers left out), or an error saying why not."""
    bucket, prefix = split_url(url)
    s3 = client()
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        objects = [
            S3Object(bucket, obj["Key"], int(obj["Size"]))
            for page in pages
            for obj in page.get("Contents", [])
            if not obj["Key"].endswith("/")
        ]
    except s3.exceptions.NoSuchBucket:
        raise S3Error(f"{url}: bucket {bucket!r} does not exist; check the URL") from None
    except Exception as err:  # botocore raises many kinds; all mean "cannot read this".
        raise S3Error(
            f"{url}: cannot list objects ({err}); check credentials and endpoint"
        ) from None
    if not objects:
        raise S3Error(f"{url}: no objects under this prefix; check the bucket and prefix")
    return objects


def download(objects: list[S3Object], target: Path) -> list[Path]:
    """The objects mirrored below `target` by key."""
    s3 = client()
    files: list[Path] = []
    for obj in objects:
        local = target / obj.key
        local.parent.mkdir(parents=True, exist_ok=True)
        try:
            s3.download_file(obj.bucket, obj.key, str(local))
        except Exception as err:
            raise S3Error(
                f"{obj.url}: cannot read the object ({err}); check credentials and endpoint"
            ) from None
        files.append(local)
    return files


def first_line(obj: S3Object) -> str:
    """The object's first line (without its line break), read by ranged GETs, not the object."""
    s3 = client()
    data = b""
    while b"\n" not in data and len(data) < obj.size:
        last = min(len(data) + _HEADER_RANGE, obj.size) - 1
        try:
            body = s3.get_object(Bucket=obj.bucket, Key=obj.key, Range=f"bytes={len(data)}-{last}")
        except Exception as err:
            raise S3Error(
                f"{obj.url}: cannot read the first line ({err}); check credentials and endpoint"
            ) from None
        chunk = body["Body"].read()
        if not chunk:  # the object shrank since it was listed
            break
        data += chunk
    return data.split(b"\n", 1)[0].removesuffix(b"\r").decode("utf-8")


def upload_tree(source: Path, url: str, last: str | None = None) -> None:
    """Every file below `source` to the prefix, keeping relative paths; the file named `last`
    (relative to `source`) goes up after every other one."""
    bucket, prefix = split_url(url)
    s3 = client()
    files = [p for p in source.rglob("*") if p.is_file()]
    for path in sorted(files, key=lambda p: (p.relative_to(source).as_posix() == last, p)):
        key = "/".join(
            part for part in (prefix.rstrip("/"), path.relative_to(source).as_posix()) if part
        )
        try:
            s3.upload_file(str(path), bucket, key)
        except Exception as err:
            raise S3Error(
                f"{url}: cannot write {key} ({err}); check the bucket and credentials"
            ) from None
