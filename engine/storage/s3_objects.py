"""Where a table in an object store is, and the requests pyarrow.fs cannot send
(conditional writes, versioned reads): for the S3 backend (engine/storage/s3.py).

A location is `s3://BUCKET/PREFIX[?endpoint=URL&region=NAME]`; credentials come from the
usual AWS environment variables. Conditional writes go through boto3: put-if-absent is
`If-None-Match: *`, compare-and-swap is `If-Match: <etag>`. Every conditional write tags
its object with a random write id (user metadata), so a retried request that finds an
object can tell its own earlier attempt (whose response was lost) from someone else's.
"""

from __future__ import annotations

import functools
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import pyarrow.fs as pafs

if TYPE_CHECKING:
    from botocore.client import BaseClient

SCHEME = "s3://"
WRITE_ID = "ib-write"  # user metadata key: the write id of a conditional write


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # the table's key prefix, no leading or trailing '/'
    endpoint: str | None = None  # None: AWS itself
    region: str = "us-east-1"

    @property
    def root(self) -> str:
        """The table root as pyarrow's S3 file system names paths: `bucket/prefix`."""
        return f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket

    def uri(self) -> str:
        query = f"?endpoint={self.endpoint}&region={self.region}" if self.endpoint else ""
        return f"{SCHEME}{self.root}{query}"


def is_s3(location: str) -> bool:
    return location.startswith(SCHEME)


def parse_location(location: str) -> S3Location:
    """`s3://bucket/prefix?endpoint=URL&region=NAME` -> S3Location (ValueError if malformed)."""
    parts = urlsplit(location)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"{location!r}: expected s3://BUCKET/PREFIX[?endpoint=URL]")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"endpoint", "region"}
    if unknown:
        raise ValueError(
            f"{location!r}: unknown parameter(s) {sorted(unknown)}; allowed: endpoint, region"
        )
    return S3Location(
        bucket=parts.netloc,
        prefix=parts.path.strip("/"),
        endpoint=query.get("endpoint"),
        region=query.get("region") or os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
    )


@functools.lru_cache(maxsize=8)
def filesystem(endpoint: str | None, region: str) -> pafs.S3FileSystem:
    """pyarrow's S3 file system (Parquet, listing, plain reads and writes); one per process."""
    if endpoint is None:
        return pafs.S3FileSystem(region=region)
    parts = urlsplit(endpoint)
    return pafs.S3FileSystem(
        endpoint_override=parts.netloc,
        scheme=parts.scheme or "http",
        region=region,
        allow_bucket_creation=False,
        check_directory_existence_before_creation=False,
    )


@functools.lru_cache(maxsize=8)
def _client(endpoint: str | None, region: str) -> BaseClient:  # boto3 clients are thread-safe
    import boto3  # only S3 tables need it
    from botocore.config import Config

    # No SDK retries: Storage retries itself, so it knows when a retry found its own write.
    config = Config(retries={"max_attempts": 1, "mode": "standard"}, max_pool_connections=32)
    return boto3.client("s3", endpoint_url=endpoint, region_name=region, config=config)


def new_write_id() -> str:
    return uuid.uuid4().hex


class PreconditionFailed(Exception):
    """A conditional write's condition did not hold (HTTP 412)."""


class Objects:
    """Conditional requests on one bucket (keys are full paths minus `bucket/`)."""

    def __init__(self, location: S3Location) -> None:
        self.bucket = location.bucket
        self.client = _client(location.endpoint, location.region)

    def key(self, full: str) -> str:
        return full[len(self.bucket) + 1 :]

    def put(
        self,
        full: str,
        data: bytes,
        write_id: str,
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
    ) -> str:
        """PUT tagged with `write_id`, under the given condition; returns the new etag.
        PreconditionFailed, or FileNotFoundError for If-Match on a missing object."""
        from botocore.exceptions import ClientError

        kwargs: dict = {"Metadata": {WRITE_ID: write_id}}
        if if_none_match:
            kwargs["IfNoneMatch"] = "*"
        if if_match is not None:
            kwargs["IfMatch"] = if_match
        try:
            reply = self.client.put_object(
                Bucket=self.bucket,
                Key=self.key(full),
                Body=data if isinstance(data, bytes) else bytes(data),  # botocore: no buffers
                **kwargs,
            )
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code")
            if code in ("PreconditionFailed", "ConditionalRequestConflict"):
                raise PreconditionFailed(full) from None
            if code in ("NoSuchKey", "404"):
                raise FileNotFoundError(full) from None
            raise
        return reply["ETag"]

    def get(self, full: str) -> tuple[bytes, str, str | None]:
        """(bytes, etag, write id or None); FileNotFoundError if absent."""
        from botocore.exceptions import ClientError

        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self.key(full))
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                raise FileNotFoundError(full) from None
            raise
        return reply["Body"].read(), reply["ETag"], reply.get("Metadata", {}).get(WRITE_ID)

    def delete_if(self, full: str, etag: str) -> None:
        """Delete `full` only if it still is the object with `etag` (else leave it)."""
        from botocore.exceptions import ClientError

        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key(full), IfMatch=etag)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") not in ("PreconditionFailed", "NoSuchKey"):
                raise

    def etag(self, full: str) -> str | None:
        from botocore.exceptions import ClientError

        try:
            return self.client.head_object(Bucket=self.bucket, Key=self.key(full))["ETag"]
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return None
            raise
