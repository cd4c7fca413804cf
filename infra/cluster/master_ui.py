"""What the Spark master's web UI says about its cluster."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

# urllib without proxies: the master's UI is on loopback and must never go through a proxy.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def master_json(web_url: str, timeout_s: float = 2.0) -> dict[str, Any] | None:
    """The master's state (web UI /json/), or None when it does not answer."""
    try:
        with _OPENER.open(f"{web_url}/json/", timeout=timeout_s) as resp:
            return json.loads(resp.read().decode())
    except (OSError, ValueError):
        return None


def alive_worker_hosts(state: dict[str, Any] | None) -> list[str]:
    if not state:
        return []
    return sorted(w.get("host", "") for w in state.get("workers", []) if w.get("state") == "ALIVE")
