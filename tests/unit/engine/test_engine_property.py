"""Random interleavings of several writers against an in-memory model of the table.

Writers begin (explicitly or by writing), write (upsert/delete), commit (OCC may abort
them: then they roll back), crash without committing, or roll back; MOR tables also
compact. After every step the snapshot must equal the model, and every as-of read must
keep its first answer.

COW merges a delete at write time: deleting a key that is absent then is a no-op that
touches no file group (so a later insert of that key by another writer survives). MOR
writes the delete marker regardless. MOR merges a slice's logs as Apache Hudi does, in the
order of their instants' requested times (not the order they committed in); a compaction
folds them into the base the next slice starts from.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field

import pytest
from engine_helpers import as_dict, rows
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.config import TableConfig
from engine.errors import WriteConflictError
from engine.table import Table, WriteStat
from engine.timeline.instant import Instant

WRITERS = 3
keys = st.lists(st.integers(0, 11), min_size=1, max_size=5)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("begin"), st.integers(0, WRITERS - 1)),
        st.tuples(
            st.just("write"),
            st.integers(0, WRITERS - 1),
            keys,
            st.integers(0, 999),
            st.sampled_from(["upsert", "upsert", "delete"]),
        ),
        st.tuples(
            st.just("write"),
            st.integers(0, WRITERS - 1),
            keys,
            st.integers(0, 999),
            st.sampled_from(["upsert", "upsert", "delete"]),
        ),
        st.tuples(st.just("commit"), st.integers(0, WRITERS - 1)),
        st.tuples(st.just("commit"), st.integers(0, WRITERS - 1)),
        st.tuples(st.just("crash"), st.integers(0, WRITERS - 1)),
        st.tuples(st.just("rollback"), st.integers(0, WRITERS - 1)),
        st.tuples(st.just("compact")),
        st.tuples(st.just("clean")),
    ),
    min_size=8,
    max_size=40,
)


@dataclass
class Writer:
    table: Table
    instant: Instant | None = None
    stats: list[WriteStat] = field(default_factory=list)
    changes: list[tuple[str, list[int], int]] = field(default_factory=list)


def _fold(base: dict[int, int], logs: list[tuple[str, list]]) -> dict[int, int]:
    """A MOR slice as read: its base, then its committed logs by requested time."""
    state = dict(base)
    for _, changes in sorted(logs, key=lambda log: log[0]):
        _apply(state, changes)
    return state


def _apply(model: dict[int, int], changes) -> None:
    for op, ks, value in changes:
        for k in ks:
            if op == "delete":
                model.pop(k, None)
            else:
                model[k] = value


@pytest.mark.parametrize("table_type", ["cow", "mor"])
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=steps)
def test_random_interleavings_match_the_model(table_type, plan):
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/t"
        opts = {"max_skew_ms": 0, "heartbeat_interval_s": 0}
        config = TableConfig(table_type=table_type, file_groups=3)
        Table.create(path, config, rows([]).schema, **opts).close()
        writers = [Writer(Table.open(path, writer_id=f"w{i}", **opts)) for i in range(WRITERS)]
        admin = Table.open(path, writer_id="admin", **opts)
        model: dict[int, int] = {}
        base: dict[int, int] = {}  # MOR: the slice's base and its committed logs
        logs: list[tuple[str, list]] = []
        crashed: list[Instant] = []
        as_of: dict[str, dict[int, int]] = {}
        for step in plan:
            kind, *args = step
            w = writers[args[0]] if args else None
            if kind == "begin" and w.instant is None:
                w.instant = w.table.start_instant()
            elif kind == "write":
                w.instant = w.instant or w.table.start_instant()
                ks, value, op = args[1], args[2], args[3]
                batch = rows(ks, [value] * len(ks))
                w.stats += w.table.write_files(w.instant, batch, op=op, prior=w.stats)
                if op == "delete" and table_type == "cow":
                    seen = dict(model)
                    _apply(seen, w.changes)
                    ks = [k for k in ks if k in seen]
                w.changes.append((op, ks, value))
            elif kind == "commit" and w.instant is not None:
                try:
                    done = w.table.commit(w.instant, w.stats)
                    if table_type == "mor":
                        logs.append((w.instant.requested_time, w.changes))
                        model = _fold(base, logs)
                    else:
                        _apply(model, w.changes)
                    as_of[done] = dict(model)
                    event("commit")
                except WriteConflictError:
                    event("write conflict")
                    w.table.rollback(w.instant)
                w.instant, w.stats, w.changes = None, [], []
            elif kind == "crash" and w.instant is not None:
                crashed.append(w.instant)
                writers[args[0]] = Writer(Table.open(path, writer_id=f"w{args[0]}x", **opts))
            elif kind == "rollback" and w.instant is not None:
                w.table.rollback(w.instant)
                w.instant, w.stats, w.changes = None, [], []
            elif kind == "clean" and crashed:
                admin.rollback(crashed.pop())
            elif kind == "compact" and table_type == "mor":
                c = admin.schedule_compaction()
                if c is not None:
                    admin.run_compaction(c)
                    base, logs = _fold(base, logs), []
            assert as_dict(admin.snapshot()) == model, step
        for t, expected in as_of.items():
            assert as_dict(admin.as_of(t)) == expected
        for w in [*writers, admin]:
            w.table.close() if isinstance(w, Writer) else w.close()
