"""Timeline: every generated time, requested or completion, strictly greater than every time
generated before it; no completed instant referencing a missing file; no instant committed
twice or after its rollback; orphan files never read.

The order of generation is the engine's generation sequence (engine/truetime.py): a number
taken under the table lock with each generated time and recorded in the instant's files.
No clock fault moves it and no crash erases it, unlike the processes' clocks or history.

Each instant is a dict: requested, completed (None unless completed), action, state,
files_exist, missing_files, committed_count (its completions, archived and active
together, or the history's commit events if more), completion_times (the table's, where
known), rolled_back, and generated: the times its files record, [{kind: requested |
completion, time, seq}] (seq None where no number was
recorded; a rollback also lists the times of the instant it removed). Without `generated`
the instant's times count as unnumbered. `last_generated` is the store's final record,
{"time", "seq"}, or {"error": why it could not be read}, or None if there is none.
Completed COW commits may list their base files as `writes`: [{file_id, file_name,
prev_file, prev_same_instant}] (the commit metadata's write stats), for the lost-update rule:
in each file group, in completion order, a merged base must supersede the group's newest
base completed before it (a stale lock holder or a writer without OCC that merged an older
slice silently drops every update completed in between). A completed stream commit names
its checkpoint id as `stream_checkpoint`, for the checkpoint-order rule: requested times
ascend with checkpoint ids (Hudi's readers merge a slice's logs in requested-time order,
so an earlier checkpoint's instant requested later lets its older rows win). Batch
writers' instants carry none and may interleave freely. A completed data write or
compaction lists the data files it owns as `files` (its commit metadata's), for the
orphan rule: every row a read returned (`reads`: the run's `read` events, each with
`files`, {file name: rows}) came from a file some completed instant that was not rolled
back owns. A file none owns (a rolled-back or never-completed instant's, or one its
instant's commit left out) is an orphan, and its rows a dirty read. Whether the owner had
completed by the time of the read is the isolation check's.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from engine.timeline.instant import COMMIT_ACTIONS
from harness.checks.result import CheckResult, capped

NAME = "timeline"
# What names a read in the evidence of an orphan it returned.
_READ_KEYS = ("reader", "read_kind", "as_of", "begin", "end", "read_at")


def _duplicates(values: Iterable[Any]) -> list[dict[str, Any]]:
    return [{"time": v, "count": n} for v, n in Counter(values).items() if n > 1]


def _generations(instants: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every generated time once (archived and active copies, a rollback's record of what
    it removed and that instant itself all name the same generation)."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for i in instants:
        generated = i.get("generated")
        if generated is None:
            generated = [{"kind": "requested", "time": i["requested"], "seq": None}]
            if i.get("completed") is not None:
                generated.append({"kind": "completion", "time": i["completed"], "seq": None})
        for g in generated:
            entry = {"seq": g.get("seq"), "time": g["time"], "kind": g.get("kind")}
            entry["instant"] = i["requested"]
            key = (entry["seq"], entry["time"], entry["kind"])
            seen.setdefault(key, entry)
    return list(seen.values())


def _order(
    generations: list[dict[str, Any]], last: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """(times not greater than an earlier-generated time, reasons the order evidence is
    partial or contradictory, evidence)."""
    numbered = sorted((g for g in generations if g["seq"] is not None), key=lambda g: g["seq"])
    unnumbered = [g for g in generations if g["seq"] is None]
    times_of: dict[int, set[str]] = defaultdict(set)
    for g in numbered:
        times_of[g["seq"]].add(g["time"])
    clashes = [{"seq": s, "times": sorted(t)} for s, t in times_of.items() if len(t) > 1]
    max_seq = numbered[-1]["seq"] if numbered else None

    partial, contradictory = [], []
    if not generations:
        partial.append("no generated times")
    if unnumbered:
        partial.append(f"{len(unnumbered)} generated times carry no sequence number")
    if clashes:
        contradictory.append(f"{len(clashes)} sequence numbers name more than one time")
    if last is None:
        if numbered:
            partial.append("the generation record (.hoodie/.truetime) is missing")
    elif last.get("error"):
        partial.append(f"the generation record is unreadable: {last['error']}")
    elif last.get("seq") is None:
        partial.append("the generation record carries no sequence number")
    elif max_seq is not None and last["seq"] < max_seq:
        contradictory.append(f"the generation record's count {last['seq']} is below {max_seq}")

    not_increasing = []
    # A count that restarted (a lost or overwritten record) numbers two eras alike: no
    # order can be read from it, so it is not judged (unknown, never a false `invalid`).
    top: dict[str, Any] | None = None  # the largest time generated so far
    for g in [] if contradictory else numbered:
        if top is not None and not g["time"] > top["time"]:
            not_increasing.append({**g, "not_after": top})
        if top is None or g["time"] > top["time"]:
            top = g
    partial += contradictory
    evidence = {
        "numbered": len(numbered),
        "unnumbered": {"count": len(unnumbered), "items": capped(unnumbered)},
        "sequence_clashes": {"count": len(clashes), "items": capped(clashes)},
        # Numbers never recorded: generations whose instant file was never written (a
        # crash or a collision right after generation). Expected, not evidence of a fault.
        "unrecorded_numbers": (max_seq - len(times_of)) if max_seq is not None else 0,
        "last_generated": dict(last) if last is not None else None,
    }
    return not_increasing, partial, evidence


def _stale_bases(instants: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """COW bases merged from a slice that was no longer the file group's newest when they
    completed: every update completed in between is lost (DESIGN.md, OCC)."""
    chains: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = defaultdict(list)
    for i in instants:
        if i.get("state") != "completed" or i.get("completed") is None or i.get("rolled_back"):
            continue
        for w in i.get("writes") or []:
            chains[w["file_id"]].append((i["completed"], i["requested"], w))
    stale = []
    for file_id, chain in chains.items():
        newest: str | None = None
        for completed, requested, w in sorted(chain, key=lambda c: c[0]):
            # A second eager flush merged the instant's own first file, which the commit
            # dropped: its base is not on the timeline, so it cannot be judged.
            if not w.get("prev_same_instant") and w.get("prev_file") != newest:
                stale.append(
                    {
                        "file_group": file_id,
                        "instant": requested,
                        "completed": completed,
                        "merged": w.get("prev_file"),
                        "newest_then": newest,
                    }
                )
            newest = w["file_name"]
    return stale


def _checkpoint_order(instants: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Completed stream commits requested at or before a commit of an earlier checkpoint."""
    by_checkpoint: dict[int, list[str]] = defaultdict(list)
    for i in instants:
        if i.get("stream_checkpoint") is None or i.get("state") != "completed":
            continue
        if not i.get("rolled_back"):
            by_checkpoint[i["stream_checkpoint"]].append(i["requested"])
    crossed = []
    top: tuple[int, str] | None = None  # the latest-requested commit of lower checkpoints
    for ckp in sorted(by_checkpoint):
        for requested in sorted(by_checkpoint[ckp]):
            if top is not None and requested <= top[1]:
                crossed.append(
                    {
                        "checkpoint": ckp,
                        "instant": requested,
                        "earlier_checkpoint": top[0],
                        "earlier_instant": top[1],
                    }
                )
        # Updated after the group: one checkpoint's own commits are not ordered among
        # themselves, only against lower checkpoints'.
        latest = max(by_checkpoint[ckp])
        if top is None or latest > top[1]:
            top = (ckp, latest)
    return crossed


def _orphans_read(
    instants: list[Mapping[str, Any]], reads: list[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows reads returned from files no completed instant owns, reasons some reads could
    not be judged)."""
    owners = [
        i
        for i in instants
        if i.get("state") == "completed"
        and i.get("action") in COMMIT_ACTIONS
        and not i.get("rolled_back")
    ]
    unlisted = [i["requested"] for i in owners if i.get("files") is None]
    if reads and unlisted:
        # An owner whose files are unknown could own any file read: nothing is judged.
        return [], [f"{len(unlisted)} completed instants list no files"]
    owned = {f for i in owners for f in i.get("files") or []}
    found, unjudged = [], 0
    for r in reads:
        files: Mapping[str, int] | None = r.get("files")
        # Rows without a file name (or a read that recorded none) could be an orphan's.
        if files is None or sum(files.values()) < r.get("rows", 0):
            unjudged += 1
            continue
        found += [
            {**{k: r.get(k) for k in _READ_KEYS}, "file": name, "rows": n}
            for name, n in files.items()
            if name not in owned
        ]
    partial = [f"{unjudged} reads do not name the file of every row"] if unjudged else []
    return found, partial


def _violations(
    instants: list[Mapping[str, Any]],
    not_increasing: list[dict[str, Any]],
    orphans_read: list[dict[str, Any]],
) -> dict[str, list[Any]]:
    """Each rule's findings, by the rule's name in the evidence."""
    completed = [i for i in instants if i.get("state") == "completed"]
    no_time = [i["requested"] for i in completed if i.get("completed") is None]
    timed = [i for i in completed if i.get("completed") is not None]
    return {
        "requested_duplicates": _duplicates(i["requested"] for i in instants),
        "completion_duplicates": _duplicates(i["completed"] for i in timed),
        # In order of generation, a time not above every earlier one (names both times).
        "not_increasing": not_increasing,
        "completed_without_completion_time": no_time,
        "missing_files": [
            {
                "instant": i["requested"],
                "action": i.get("action"),
                "files": capped(i.get("missing_files") or []),
            }
            for i in completed
            if not i.get("files_exist", True) or i.get("missing_files")
        ],
        "committed_twice": [
            {
                "instant": i["requested"],
                "count": i["committed_count"],
                "completion_times": i.get("completion_times"),
            }
            for i in instants
            if i.get("committed_count", 0) > 1
        ],
        # In this engine only inflight instants are rolled back; a rolled-back instant that
        # is (or was) completed lost data or came back from the dead (a zombie's commit).
        "committed_after_rollback": [
            i["requested"]
            for i in instants
            if i.get("rolled_back")
            and (i.get("committed_count", 0) > 0 or i.get("state") == "completed")
        ],
        # Rows a read returned from a data file no completed instant owns: a dirty read.
        "orphans_read": orphans_read,
        # A merge of an older slice than the newest completed: the updates between are lost.
        "stale_base": _stale_bases(instants),
        # A stream commit requested before a commit of an earlier checkpoint.
        "checkpoint_order": _checkpoint_order(instants),
    }


def timeline(
    instants: Iterable[Mapping[str, Any]],
    orphans: Iterable[str] | None = None,
    last_generated: Mapping[str, Any] | None = None,
    reads: Iterable[Mapping[str, Any]] = (),
) -> CheckResult:
    """`orphans`: the orphan data files left in the table (evidence only: a read of one,
    or of an orphan since deleted, is found in `reads`)."""
    instants, reads = list(instants), list(reads)
    if not instants:
        return CheckResult(NAME, "unknown", {"reason": "no instants on the timeline"})
    not_increasing, partial, order_evidence = _order(_generations(instants), last_generated)
    orphans_read, unjudged = _orphans_read(instants, reads)
    partial += unjudged
    violations = _violations(instants, not_increasing, orphans_read)
    evidence: dict[str, Any] = {
        "instants": len(instants),
        "completed": sum(1 for i in instants if i.get("state") == "completed"),
        "rolled_back": sum(1 for i in instants if i.get("rolled_back")),
        "orphan_files": len(list(orphans or [])),
        "reads": len(reads),
        "generation_order": order_evidence,
    }
    for key, found in violations.items():
        evidence[key] = {"count": len(found), "items": capped(found)}
    if any(violations.values()):
        return CheckResult(NAME, "invalid", evidence)
    if partial:
        # No violation among what is judged, but the rest (order, reads) is not known.
        return CheckResult(NAME, "unknown", {**evidence, "reason": "; ".join(partial)})
    return CheckResult(NAME, "valid", evidence)
