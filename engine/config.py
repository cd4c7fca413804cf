"""Safety switches and table configuration, with a strict JSON round trip."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from engine.errors import ConfigError


@dataclass(frozen=True)
class Safety:
    """Each switch turns one protection on; the harness turns them off to show the anomaly."""

    occ: bool = True
    pk_check: bool = True
    put_if_absent: bool = True
    strict_monotonic: bool = True
    completion_time_slicing: bool = True
    subsume_acks: bool = True
    coordinator_state: bool = True
    # Zombie coordinators and lock holders past their lease cannot write the timeline, and
    # an instant completes at most once (engine/table/fencing.py; claims also need
    # put_if_absent, being a put-if-absent of the completion).
    fencing: bool = True
    truetime_wait: bool = True
    lazy_rollback: bool = True
    verify_writes: bool = True  # a data file that did not land whole fails its write
    # Hudi 1.1 keeps blocking instant generation for COW upserts (#13464): an async
    # writer's merge would read a base file whose instant has not committed yet.
    cow_upsert_blocking: bool = True
    # Hudi's markers: every data file is recorded before it is written, and the files of an
    # instant that its commit does not list (failed attempts, superseded flushes, temp
    # files) are deleted before it completes (engine/table/markers.py). Off: they stay, and
    # a reader that lists storage sees them.
    markers: bool = True
    # The stream's instants follow its checkpoints: a request naming checkpoint n first
    # mints every earlier checkpoint that can still commit and has no instant yet, so
    # requested times ascend with checkpoint ids whatever order the requests arrive in.
    # Off: minted in arrival order, and Hudi's readers (logs merged in requested-time
    # order) let an earlier checkpoint's older rows win.
    checkpoint_ordered_instants: bool = True
    # The cleaner keeps every file a read as of one of the last `retain_commits` commits
    # needs (engine/table/cleaning.py). Off: it keeps only each group's latest slice, as if
    # it retained one commit, and deletes files reads inside the window still need.
    clean_retention: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            if not isinstance(getattr(self, f.name), bool):
                raise ConfigError(
                    f"safety.{f.name} must be true or false, got {getattr(self, f.name)!r}"
                )

    def to_dict(self) -> dict[str, bool]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Safety:
        _check_keys("safety", data, cls)
        return cls(**data)


TABLE_TYPES = ("cow", "mor")
INDEX_TYPES = ("bucket", "dynamic")


@dataclass(frozen=True)
class TableConfig:
    table_type: str = "cow"
    key_field: str = "id"
    file_groups: int = 8
    index: str = "bucket"
    ordering_field: str | None = None

    def __post_init__(self) -> None:
        if self.table_type not in TABLE_TYPES:
            raise ConfigError(f"table.type must be one of {TABLE_TYPES}, got {self.table_type!r}")
        if self.index not in INDEX_TYPES:
            raise ConfigError(f"table.index must be one of {INDEX_TYPES}, got {self.index!r}")
        if not isinstance(self.key_field, str) or not self.key_field:
            raise ConfigError(f"table.key must be a non-empty string, got {self.key_field!r}")
        # bool is an int subclass; reject it explicitly.
        fg = self.file_groups
        if not isinstance(fg, int) or isinstance(fg, bool) or not 1 <= fg <= 9999:
            raise ConfigError(f"table.file_groups must be an integer in 1..9999, got {fg!r}")
        if self.ordering_field is not None and (
            not isinstance(self.ordering_field, str) or not self.ordering_field
        ):
            raise ConfigError(
                f"table.ordering_field must be a column name, got {self.ordering_field!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableConfig:
        _check_keys("table", data, cls)
        return cls(**data)


def _check_keys(section: str, data: dict[str, Any], cls: type) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f"{section} must be a mapping, got {type(data).__name__}")
    allowed = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown {section} key(s) {unknown}; allowed: {allowed}")
