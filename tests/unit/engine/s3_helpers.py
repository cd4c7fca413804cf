"""One S3-compatible server (moto, server mode, a real process on loopback) per test
session, and a fresh table location in it per test: engine tests run against the real
S3 API, conditional writes included, never against a mock of the client."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from infra.services.s3_server import CREDENTIALS, S3Server

BUCKET = "instantbench-tests"


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[S3Server]:
    saved = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)  # what the engine's S3 clients present (from the env)
    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log")
    try:
        server.start()
        server.create_bucket(BUCKET)
        yield server
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def s3_location(s3_server) -> Callable[[], str]:
    """A new, empty table location on each call."""
    return lambda: f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}?endpoint={s3_server.endpoint}"


@pytest.fixture(params=["local", "s3"])
def storage_root(request, tmp_path) -> str:
    """A table root on each backend: a local folder, then an S3 location."""
    if request.param == "local":
        return str(tmp_path / "table")
    return request.getfixturevalue("s3_location")()
