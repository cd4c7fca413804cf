"""The file-system view: visible data files -> file groups -> file slices.

A slice starts at a base instant (a base file's requested time, or a compaction's
requested time while that compaction is pending) and holds the log files attached to it.
Completion-time slicing (Hudi 1.x, RFC-66): a log belongs to the slice with the largest
start <= the log's completion time. With slicing off, the log's requested time is used
instead (the 0.x rule): a log that was inflight while a compaction was scheduled is then
attached to the old slice, which the compaction did not include, and is lost when the
compaction's base becomes visible.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from engine.layout.file_names import BASE, DataFile

NO_BASE = ""  # start of the slice that precedes the first base file


@dataclass
class FileSlice:
    file_id: str
    start: str
    base: DataFile | None = None
    logs: list[DataFile] = field(default_factory=list)


@dataclass
class FileGroup:
    file_id: str
    slices: list[FileSlice]  # ascending start

    def latest_base_slice(self) -> int:
        """Index of the newest slice that has a visible base (0 if none has)."""
        for i in range(len(self.slices) - 1, -1, -1):
            if self.slices[i].base is not None:
                return i
        return 0


@dataclass
class FileSystemView:
    groups: dict[str, FileGroup]
    completion: dict[str, str]  # file name -> completion time of the instant that wrote it

    def file_ids(self) -> list[str]:
        return sorted(self.groups)

    def latest(self, file_id: str) -> tuple[DataFile | None, list[DataFile]]:
        """What a reader merges: the newest visible base and the logs of its slice and of
        later slices whose base is not visible yet (pending compaction), in merge order."""
        group = self.groups.get(file_id)
        if group is None:
            return None, []
        first = group.latest_base_slice()
        logs = [log for s in group.slices[first:] for log in s.logs]
        logs.sort(key=self.log_order)
        return group.slices[first].base, logs

    def without_logs(self, names: Collection[str]) -> FileSystemView:
        """This view with the log files `names` taken out of their slices: each key's
        version before those logs, what a reader that files them under another slice
        reads of this one (a judge's prediction, harness/checks/hudi_exclusions.py)."""
        if not names:
            return self
        groups = {
            fid: FileGroup(
                fid,
                [
                    FileSlice(fid, s.start, s.base, [f for f in s.logs if f.name not in names])
                    for s in group.slices
                ],
            )
            for fid, group in self.groups.items()
        }
        return FileSystemView(groups, self.completion)

    def log_order(self, log: DataFile) -> tuple[str, int, str]:
        """Apache Hudi's merge order of a slice's logs (HoodieLogFile.getLogFileComparator):
        the requested time in the name, then the log version, then the write token; the
        row merged last wins. Completion time picks the slice a log joins, never its order
        within it."""
        return (log.instant, log.version, log.write_token)


def build_view(
    files: Iterable[tuple[DataFile, str]],
    pending_compactions: Mapping[str, Iterable[str]] | None = None,
    completion_time_slicing: bool = True,
) -> FileSystemView:
    """`files`: visible data files with their instant's completion time.
    `pending_compactions`: compaction requested time -> file ids in its plan (slice starts
    whose base is not visible)."""
    bases: dict[str, dict[str, DataFile]] = {}
    logs: dict[str, list[DataFile]] = {}
    completion: dict[str, str] = {}
    for f, completed in files:
        completion[f.name] = completed
        if f.kind == BASE:
            per_group = bases.setdefault(f.file_id, {})
            seen = per_group.get(f.instant)
            # One base per (group, instant) is a commit invariant; pick deterministically if
            # an unsafe run broke it.
            if seen is None or f.name > seen.name:
                per_group[f.instant] = f
        else:
            logs.setdefault(f.file_id, []).append(f)
    starts: dict[str, set[str]] = {fid: {NO_BASE, *b} for fid, b in bases.items()}
    for time, file_ids in (pending_compactions or {}).items():
        for fid in file_ids:
            starts.setdefault(fid, {NO_BASE}).add(time)
    groups: dict[str, FileGroup] = {}
    for fid in set(bases) | set(logs):
        ordered = sorted(starts.get(fid, {NO_BASE}))
        group_bases = bases.get(fid, {})
        slices = [FileSlice(fid, s, group_bases.get(s)) for s in ordered]
        for log in logs.get(fid, ()):
            key = completion[log.name] if completion_time_slicing else log.instant
            slices[bisect.bisect_right(ordered, key) - 1].logs.append(log)
        groups[fid] = FileGroup(fid, slices)
    view = FileSystemView(groups, completion)
    for group in groups.values():
        for s in group.slices:
            s.logs.sort(key=view.log_order)
    return view
