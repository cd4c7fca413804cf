"""Data file names.

Base file: `<fileId>_<writeToken>_<instant>.parquet`
Log file:  `.<fileId>_<instant>.log.<version>_<writeToken>` (Parquet content)
File ids and write tokens are `[A-Za-z0-9-]+`, so '_' and '.' separate fields safely and
temp files (`.tmp-...`) never parse as data files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BASE, LOG = "base", "log"
_ID = r"[A-Za-z0-9-]+"
_BASE_RE = re.compile(rf"^({_ID})_({_ID})_(\d{{17}})\.parquet$")
_LOG_RE = re.compile(rf"^\.({_ID})_(\d{{17}})\.log\.(\d+)_({_ID})$")
_ID_RE = re.compile(rf"^{_ID}$")


@dataclass(frozen=True)
class DataFile:
    name: str
    file_id: str
    instant: str  # requested time of the instant that wrote it
    kind: str  # base | log
    write_token: str
    version: int = 0  # log version within (file group, instant)


def check_id(what: str, value: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise ValueError(f"{what} must match [A-Za-z0-9-]+, got {value!r}")
    return value


def base_file_name(file_id: str, write_token: str, instant: str) -> str:
    return (
        f"{check_id('file id', file_id)}_{check_id('write token', write_token)}_{instant}.parquet"
    )


def log_file_name(file_id: str, instant: str, version: int, write_token: str) -> str:
    fid, token = check_id("file id", file_id), check_id("write token", write_token)
    return f".{fid}_{instant}.log.{version}_{token}"


def parse_data_file(name: str) -> DataFile | None:
    m = _BASE_RE.match(name)
    if m:
        return DataFile(name, m.group(1), m.group(3), BASE, m.group(2))
    m = _LOG_RE.match(name)
    if m:
        return DataFile(name, m.group(1), m.group(2), LOG, m.group(4), int(m.group(3)))
    return None


def data_file(name: str) -> DataFile:
    """A name the engine wrote as a data file (a write stat's): anything else is a bug."""
    parsed = parse_data_file(name)
    if parsed is None:
        raise ValueError(f"{name!r} is not a data file name")
    return parsed
