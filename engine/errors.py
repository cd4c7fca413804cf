"""Every exception the engine raises. All derive from `EngineError`."""

from __future__ import annotations

from collections.abc import Iterable


class EngineError(Exception):
    """Base class of every engine error."""


class ConfigError(EngineError, ValueError):
    """A bad configuration value (names the key and what is allowed)."""


class InvalidInstantTimeError(EngineError, ValueError):
    """A string that is not a 17-digit `yyyyMMddHHmmssSSS` instant time."""


class NotATableError(EngineError):
    def __init__(self, path: str, reason: str = "no .hoodie/hoodie.properties") -> None:
        super().__init__(f"not a table: {path} ({reason})")
        self.path = path


class ReadOnlyTableError(EngineError):
    """A table Apache Hudi wrote: the engine reads it and never changes it."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path}: written by Apache Hudi, read only here: {what} refused")


class TableExistsError(EngineError):
    def __init__(self, path: str) -> None:
        super().__init__(f"a table already exists at {path}")
        self.path = path


class CorruptInstantError(EngineError):
    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"corrupt instant file {file}: {reason}")
        self.file = file


class CorruptFileError(EngineError):
    """A data file that cannot be read (torn, truncated, not Parquet)."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(f"corrupt data file {file}: {reason}")
        self.file = file


class InstantExistsError(EngineError, FileExistsError):
    """A put-if-absent collision on the timeline: another writer owns this instant time."""

    def __init__(self, file: str, reason: str = "already exists") -> None:
        super().__init__(f"instant file {file} {reason} (another writer picked the same time)")
        self.file = file


class InstantStateError(EngineError):
    """An instant is not in the state an operation needs (e.g. commit of a completed one)."""


class WriteConflictError(EngineError):
    def __init__(self, instant: str, other: str, file_groups: Iterable[str]) -> None:
        groups = sorted(file_groups)
        super().__init__(
            f"write conflict: instant {instant} and instant {other} (completed after {instant}"
            f" started) both touch file groups {groups}"
        )
        self.instant, self.other, self.file_groups = instant, other, groups


class DuplicateKeyError(EngineError):
    def __init__(self, instant: str, keys: Iterable[object], file_groups: Iterable[str]) -> None:
        keys, groups = list(keys), sorted(set(file_groups))
        shown = keys[:10] + (["..."] if len(keys) > 10 else [])
        super().__init__(
            f"duplicate key: instant {instant} inserts {len(keys)} key(s) {shown} that also live"
            f" in other file groups; groups involved {groups}"
        )
        self.instant, self.keys, self.file_groups = instant, keys, groups


class SchemaMismatchError(EngineError):
    """Records whose columns or types do not match the table schema."""


class MissingKeyColumnError(EngineError):
    """Records without the key column, or with null keys."""


class RollbackError(EngineError):
    """A rollback that cannot be done (e.g. of a completed instant without force)."""


class InstantRolledBackError(RollbackError):
    def __init__(self, instant: str) -> None:
        super().__init__(f"instant {instant} was rolled back; it can no longer be committed")
        self.instant = instant


class FencedError(EngineError):
    """A stale (fenced-off) coordinator or lock holder tried to touch the timeline."""


class InstantClaimedError(InstantStateError):
    """A second completion (or a completion after a rollback) of one requested instant."""

    def __init__(self, instant: str) -> None:
        super().__init__(
            f"instant {instant} is already claimed (completed or rolled back by another "
            "process): an instant completes at most once"
        )
        self.instant = instant


class LockTimeoutError(EngineError):
    def __init__(self, name: str, timeout_s: float, holder: str | None) -> None:
        super().__init__(
            f"timed out after {timeout_s:.3f}s waiting for lock {name}; held by {holder}"
        )
        self.name, self.timeout_s, self.holder = name, timeout_s, holder


class LockLostError(EngineError):
    """A lock lease ran out and was taken by another holder."""
