"""The S3 server a run starts applies conditional writes atomically, as S3 does: of two
concurrent `If-None-Match: *` PUTs of one key, exactly one succeeds. moto alone checks
the condition and stores the object in two steps on per-request threads; the test widens
that gap (the store step sleeps) so both requests are inside it together."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from moto.s3.models import S3Backend
from werkzeug.serving import make_server

from infra.services.moto_serialized import moto_app, serialized

BUCKET = "conditional-writes"


@contextlib.contextmanager
def serving(app) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture
def slow_store(monkeypatch) -> None:
    """moto stores a new object 0.3 s after checking its condition."""
    store = S3Backend.put_object

    def put_object(self, bucket_name, key_name, *args, **kwargs):
        if key_name.startswith("contended"):
            time.sleep(0.3)
        return store(self, bucket_name, key_name, *args, **kwargs)

    monkeypatch.setattr(S3Backend, "put_object", put_object)


def _winners(endpoint: str, contenders: int = 2) -> int:
    """How many of `contenders` concurrent creates of one new key succeed."""
    key = f"contended-{uuid.uuid4().hex}"  # moto's objects outlive a test in this process

    def client():
        return boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="k",
            aws_secret_access_key="s",
            config=Config(retries={"max_attempts": 1}),
        )

    with contextlib.suppress(ClientError):  # made by the other test already
        client().create_bucket(Bucket=BUCKET)
    start, won = threading.Barrier(contenders), []

    def contend(i: int) -> None:
        c = client()
        start.wait()
        try:
            c.put_object(Bucket=BUCKET, Key=key, Body=f"writer {i}".encode(), IfNoneMatch="*")
            won.append(i)
        except ClientError as e:
            assert e.response["Error"]["Code"] == "PreconditionFailed"

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(contenders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(won)


@pytest.mark.usefixtures("slow_store")
def test_concurrent_conditional_creates_have_one_winner():
    with serving(serialized(moto_app())) as endpoint:
        assert _winners(endpoint) == 1


@pytest.mark.usefixtures("slow_store")
def test_moto_alone_lets_both_win():
    """What the serialisation is for: without it both writers 'create' the object."""
    with serving(moto_app()) as endpoint:
        assert _winners(endpoint) == 2


def test_a_client_stopped_mid_upload_holds_up_only_its_own_request():
    """A paused worker's half-sent PUT must not stop every other client of the store."""
    with serving(serialized(moto_app())) as endpoint:
        host, port = endpoint.removeprefix("http://").split(":")
        stalled = socket.create_connection((host, int(port)))
        try:
            stalled.sendall(  # announces 1,000 bytes, sends 10, then stops
                f"PUT /{BUCKET}/stalled HTTP/1.1\r\nHost: {host}\r\n"
                "Content-Length: 1000\r\n\r\n".encode()
                + b"x" * 10
            )
            time.sleep(0.2)  # its request is inside the server, reading the body
            done = threading.Event()

            def other_client() -> None:
                _winners(endpoint, contenders=1)
                done.set()

            threading.Thread(target=other_client, daemon=True).start()
            assert done.wait(10), "the other client waited for the stalled upload"
        finally:
            stalled.close()
