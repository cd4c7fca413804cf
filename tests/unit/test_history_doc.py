"""docs/history.md documents every event kind the code writes: a scan of harness/ and
engine/ for the kinds passed to a HistoryWriter (`.record("kind", ...)`, `history("kind",
...)`) or to the engine's recorder callback (`recorder("kind", ...)`)."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
# The first argument is the kind, a string literal (possibly on the next line).
RECORDED = re.compile(r'(?:\.record|\brecorder|\bhistory)\(\s*"([a-z_]+)"')
DOCUMENTED = re.compile(r"^\| `([a-z_]+)` \|", re.MULTILINE)


def recorded_kinds() -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for package in ("harness", "engine"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for kind in RECORDED.findall(path.read_text(encoding="utf-8")):
                kinds.setdefault(kind, []).append(str(path.relative_to(ROOT)))
    return kinds


def test_every_recorded_kind_is_documented() -> None:
    kinds = recorded_kinds()
    # The scan itself must keep working: kinds written by the driver, the engine's
    # coordinator and writers, the runner and the workload are all found.
    assert {"batch", "commit", "flush", "ack", "run_start", "read", "txn"} <= set(kinds)
    documented = set(DOCUMENTED.findall((ROOT / "docs" / "history.md").read_text()))
    missing = {k: where for k, where in kinds.items() if k not in documented}
    assert not missing, f"event kinds not in docs/history.md: {missing}"
