"""docs/history.md documents every event kind the code writes: a scan of harness/ and
engine/ for the kinds passed to a HistoryWriter (`.record("kind", ...)`, `history("kind",
...)`) or to the engine's recorder callback (`recorder("kind", ...)`). The kinds and their
fields are declared in harness/history_events.py: the declaration, the documentation and
what the code records are held together here."""

import ast
import re
from pathlib import Path

from harness.history_events import EVENTS, Kind

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


def kinds_section() -> str:
    text = (ROOT / "docs" / "history.md").read_text()
    return text[text.index("Kinds and their extra keys") : text.index("## `history/series")]


def documented_rows() -> dict[str, str]:
    rows = re.findall(r"^\| `([a-z_]+)` \| (.*) \|$", kinds_section(), re.MULTILINE)
    return dict(rows)


def test_every_declared_kind_is_documented_and_every_documented_kind_declared() -> None:
    documented = documented_rows()
    assert len(documented) >= 30  # the scan of the table keeps working
    assert set(documented) == {k.value for k in Kind}
    assert set(EVENTS) == set(Kind)


def test_every_declared_field_is_named_in_its_kinds_row() -> None:
    rows = documented_rows()
    missing = {
        kind.value: [f for f in event.fields if f"`{f}`" not in rows[kind.value]]
        for kind, event in EVENTS.items()
    }
    assert not {k: v for k, v in missing.items() if v}, "fields not in docs/history.md"
    assert all(set(e.required) <= set(e.fields) for e in EVENTS.values())


def test_every_recorded_kind_is_declared() -> None:
    undeclared = {k: where for k, where in recorded_kinds().items() if k not in set(Kind)}
    assert not undeclared, f"event kinds not in harness/history_events.py: {undeclared}"


def recorded_fields() -> dict[str, set[str]]:
    """The keyword fields each literal kind is recorded with (`.record("kind", key=...)`,
    `recorder("kind", {"key": ...})`), also where the kind is `"a" if x else "b"`."""
    found: dict[str, set[str]] = {}
    for package in ("harness", "engine"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                func = node.func
                name = getattr(func, "attr", None) or getattr(func, "id", None)
                if name not in ("record", "recorder", "history"):
                    continue
                first = node.args[0]
                options = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
                kinds = [o.value for o in options if isinstance(o, ast.Constant)]
                keys = {k.arg for k in node.keywords if k.arg not in (None, "t")}
                if len(node.args) > 1 and isinstance(node.args[1], ast.Dict):
                    keys |= {k.value for k in node.args[1].keys if isinstance(k, ast.Constant)}
                for kind in kinds:
                    found.setdefault(kind, set()).update(keys)
    return found


def test_every_recorded_field_is_declared() -> None:
    fields = recorded_fields()
    assert {"read_error", "read_out_of_window", "fault", "commit"} <= set(fields)  # scan works
    undeclared = {
        kind: sorted(keys - set(EVENTS[Kind(kind)].fields))
        for kind, keys in fields.items()
        if kind in set(Kind) and keys - set(EVENTS[Kind(kind)].fields)
    }
    assert not undeclared, (
        f"recorded fields not declared in harness/history_events.py: {undeclared}"
    )
