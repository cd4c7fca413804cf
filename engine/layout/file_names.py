"""Data file names, as Apache Hudi 1.x names them.

Base file: `<fileId>_<writeToken>_<instant>.parquet`
Log file:  `.<fileId>_<instant>.log.<version>_<writeToken>` (Parquet content)
File ids are `[A-Za-z0-9-]+`, so '_' and '.' separate fields safely and temp files
(`.tmp-...`) never parse as data files. A write token is Hudi's
`<task partition>-<stage>-<attempt>`, three decimal numbers: Java Hudi's FSUtils.isLogFile
takes no other form (it skips any other log file without a word) and parses each part
as a Java int.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

BASE, LOG = "base", "log"
_ID = r"[A-Za-z0-9-]+"
_TOKEN = r"\d+-\d+-\d+"
_BASE_RE = re.compile(rf"^({_ID})_({_TOKEN})_(\d{{17}})\.parquet$")
_LOG_RE = re.compile(rf"^\.({_ID})_(\d{{17}})\.log\.(\d+)_({_TOKEN})$")
_ID_RE = re.compile(rf"^{_ID}$")
_TOKEN_RE = re.compile(rf"^{_TOKEN}$")
MAX_TOKEN_PART = 2**31 - 1  # a Java int: FSUtils.getTaskAttemptIdFromLogPath parses one


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


def write_token(partition: int, stage: int, attempt: int) -> str:
    """Hudi's write token of a task partition's attempt at one stage (FSUtils.makeWriteToken)."""
    parts = (partition, stage, attempt)
    if not all(isinstance(p, int) and 0 <= p <= MAX_TOKEN_PART for p in parts):
        raise ValueError(f"write token parts must be ints in 0..{MAX_TOKEN_PART}, got {parts}")
    return f"{partition}-{stage}-{attempt}"


def new_write_token(partition: int = 0, stage: int = 0) -> str:
    """A token for a writer that numbers no attempts: a random attempt number keeps it
    apart from every other write of the instant (a retry, another process), as Spark's task
    attempt ids, unique within an application, keep Hudi's tokens apart."""
    return write_token(partition, stage, secrets.randbelow(MAX_TOKEN_PART + 1))


def check_token(value: str) -> str:
    if not isinstance(value, str) or not _TOKEN_RE.match(value):
        raise ValueError(
            f"write token must be <partition>-<stage>-<attempt> numbers, got {value!r}"
        )
    if max(int(p) for p in value.split("-")) > MAX_TOKEN_PART:
        raise ValueError(f"write token parts must be at most {MAX_TOKEN_PART}, got {value!r}")
    return value


def base_file_name(file_id: str, token: str, instant: str) -> str:
    return f"{check_id('file id', file_id)}_{check_token(token)}_{instant}.parquet"


def log_file_name(file_id: str, instant: str, version: int, token: str) -> str:
    return f".{check_id('file id', file_id)}_{instant}.log.{version}_{check_token(token)}"


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
