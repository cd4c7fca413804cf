"""WriteStat: what one write_files call wrote into one file group (JSON-safe, travels over RPC)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class WriteStat:
    file_id: str  # file group
    file_name: str
    kind: str  # base | log
    instant: str  # requested time of the writing instant
    write_token: str
    op: str  # insert | upsert | delete
    num_rows: int  # rows in the file
    num_writes: int  # batch rows routed to this file group
    num_deletes: int
    num_inserts: int | None  # None when unknown (MOR logs are not merged at write time)
    file_size: int
    prev_file: str | None = None  # the file this one supersedes (COW merge input)
    new_keys: list[Any] | None = None  # keys inserted as new (dynamic index; pk check input)

    def to_dict(self, with_keys: bool = True) -> dict[str, Any]:
        d = asdict(self)
        if not with_keys:
            d.pop("new_keys")
        return d

    @classmethod
    def appended(
        cls,
        file_id: str,
        file_name: str,
        instant: str,
        write_token: str,
        rows: int,
        file_size: int,
        new_keys: list[Any] | None,
    ) -> WriteStat:
        """A new file group's base file of `rows` inserted rows (COW insert, append mode)."""
        return cls(
            file_id,
            file_name,
            kind="base",
            instant=instant,
            write_token=write_token,
            op="insert",
            num_rows=rows,
            num_writes=rows,
            num_deletes=0,
            num_inserts=rows,
            file_size=file_size,
            new_keys=new_keys,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WriteStat:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def coerce(cls, stat: WriteStat | dict[str, Any]) -> WriteStat:
        return stat if isinstance(stat, WriteStat) else cls.from_dict(stat)
