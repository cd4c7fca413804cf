"""Several OS processes writing one table: the file lock, the shared last-time marker and
OCC keep instant times unique and increasing and lose no committed row."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from engine.config import TableConfig
from engine.table import Table

CHILD = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    from engine.clock import AdjustableClock
    from engine.errors import WriteConflictError
    from engine.table import Table

    path, me, skew = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    clock = AdjustableClock()
    clock.set_offset_ms(skew)
    t = Table.open(path, writer_id=f"p{me}", clock=clock, max_skew_ms=5, heartbeat_interval_s=0)
    committed = []
    for n in range(15):
        key = me * 1000 + n
        while True:
            tx = t.transaction()
            try:
                with tx:
                    tx.write(pa.table({"id": [key], "v": [me]}))
                committed.append(key)
                break
            except WriteConflictError:
                continue
    print(",".join(map(str, committed)))
    """
)


def test_processes_share_lock_and_instant_times(table_path):
    Table.create(table_path, TableConfig(file_groups=2), max_skew_ms=0).close()
    # Clock skews equal to (and opposite) the 5 ms TrueTime bound.
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, table_path, str(i), str(s)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, s in enumerate([0, -5, 5])
    ]
    committed = set()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        committed |= {int(k) for k in out.strip().split(",")}
    t = Table.open(table_path)
    instants = t.timeline.completed()
    commits = [i for i in instants if i.action == "commit"]
    assert len(commits) == 45
    requested = [i.requested_time for i in commits]
    assert len(set(requested)) == len(requested)
    completions = [i.completion_time for i in instants]
    assert len(set(completions)) == len(completions)
    assert all(i.completion_time > i.requested_time for i in instants)
    assert sorted(t.snapshot().column("id").to_pylist()) == sorted(committed)
    assert t.pending_instants() == [] and t.timeline.duplicated_times() == {}
