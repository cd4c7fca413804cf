"""moto's S3 server with every request applied atomically, as S3 applies them.

moto checks a conditional write's condition (`If-None-Match: *`, `If-Match`) and then
stores the object in two steps, and its server runs each request on its own thread, so
two concurrent conditional PUTs of one key can both pass the check and both succeed.
S3 never lets that happen, and every guarantee the engine gives on object storage (the
`file` and `storage` locks, put-if-absent timeline files, fence grants) rests on it. Here
requests are still accepted on many threads (clients keep their connections), but the
application handles one at a time, its whole response included.

`python -m infra.services.moto_serialized HOST PORT`
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple
from werkzeug.wsgi import get_input_stream

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def serialized(app: WsgiApp) -> WsgiApp:
    """`app` called by one thread at a time, its response read before the next call. The
    request's body is read before: a client stopped mid-upload (a paused worker) holds up
    only its own request, not every other client of the store."""
    mutex = threading.Lock()

    def handle(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        body = get_input_stream(environ).read()
        environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
        with mutex:
            response = app(environ, start_response)
            try:
                return [b"".join(response)]
            finally:
                close = getattr(response, "close", None)
                if close is not None:
                    close()

    return handle


def moto_app() -> WsgiApp:
    return DomainDispatcherApplication(create_backend_app)


def main(argv: list[str]) -> None:
    host, port = argv[0], int(argv[1])
    os.environ.setdefault("MOTO_PORT", str(port))  # as moto's own server (its URLs)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: sys.exit(0))
    run_simple(host, port, serialized(moto_app()), threaded=True)


if __name__ == "__main__":
    main(sys.argv[1:])
