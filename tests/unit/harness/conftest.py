"""Harness tests that touch storage may run on both backends (a local folder, moto's S3)."""

from tests.unit.engine.s3_helpers import s3_location, s3_server, storage_root  # noqa: F401
