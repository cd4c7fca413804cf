"""Which file group a key goes to.

bucket:  a stable hash of the key modulo the bucket count -> `fg-NNNN`.
         (Python's hash() is randomised per process; this one is the same everywhere.)
dynamic: an index key -> file group built from the latest slices; new keys go to the
         smallest group, ties broken by a stable hash of (writer id, group) so that
         different writers prefer different groups; or (`buckets` given: a stream's
         writer tasks) to their bucket's group, a rule every task applies alike.

Routing (Hudi's bucket assigner): a stream decides each row's file group before its writer
tasks run (`route_keys`) and sends every group to one task (`owner_tasks`), so that in one
instant one task writes a file group.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_P = np.uint64(0x100000001B3)  # FNV-64 prime as the polynomial base


def bucket_file_id(bucket: int) -> str:
    return f"fg-{bucket:04d}"


def stable_hash(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of each key, the same in every process, vectorised with numpy.

    Integer keys: splitmix64 of the value. Other keys: a polynomial hash of the UTF-8
    string form (sum b_j * P^j per string, via reduceat), mixed with the length and
    finalised with splitmix64.
    """
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if pa.types.is_integer(keys.type):
        values = keys.cast(pa.int64()).to_numpy(zero_copy_only=False)
        return _splitmix(values.view(np.uint64))
    arr = keys if keys.type == pa.large_string() else pc.cast(keys, pa.large_string())
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    starts, lengths = offsets[:-1] - offsets[0], np.diff(offsets)
    h = np.zeros(n, dtype=np.uint64)
    total = int(offsets[-1] - offsets[0])
    if total:
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        local = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
        # P^0, P^1, ...; uint64 products wrap modulo 2^64, which is what we want.
        powers = np.ones(int(lengths.max()), dtype=np.uint64)
        powers[1:] = np.cumprod(np.full(len(powers) - 1, _P, dtype=np.uint64))
        terms = data.astype(np.uint64) * powers[local]
        nonempty = lengths > 0
        h[nonempty] = np.add.reduceat(terms, starts[nonempty])
    h ^= lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return _splitmix(h)


def _splitmix(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def bucket_of_keys(keys: pa.Array | pa.ChunkedArray, buckets: int) -> np.ndarray:
    """Bucket number (0..buckets-1) of each key; the file group is bucket_file_id(bucket).
    Pipelines route rows to writer tasks by it, so one task writes each COW file group."""
    return (stable_hash(keys) % np.uint64(buckets)).astype(np.int64)


@dataclass
class Route:
    """Per-row group codes into `file_ids`; `new` marks keys the index did not know."""

    file_ids: list[str]
    codes: np.ndarray
    new: np.ndarray | None = None


def route_bucket(keys: pa.Array | pa.ChunkedArray, buckets: int) -> Route:
    return Route([bucket_file_id(b) for b in range(buckets)], bucket_of_keys(keys, buckets))


class DynamicIndex:
    def __init__(self, keys_by_group: Mapping[str, pa.Array], groups: Iterable[str]) -> None:
        self.file_ids = sorted(set(groups) | set(keys_by_group))
        code_of = {fid: i for i, fid in enumerate(self.file_ids)}
        arrays = [a for a in keys_by_group.values() if len(a)]
        self._keys = pa.concat_arrays(arrays) if arrays else None
        self._codes = np.concatenate(
            [np.full(len(a), code_of[fid], dtype=np.int64) for fid, a in keys_by_group.items()]
            or [np.zeros(0, dtype=np.int64)]
        )
        self.sizes = np.bincount(self._codes, minlength=len(self.file_ids))

    def lookup(self, keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Group code of each key, -1 for keys not in the index."""
        if self._keys is None:
            return np.full(len(keys), -1, dtype=np.int64)
        keys = keys.cast(self._keys.type) if keys.type != self._keys.type else keys
        pos = pc.index_in(keys, value_set=self._keys).to_numpy(zero_copy_only=False)
        found = ~np.isnan(pos) if pos.dtype.kind == "f" else np.ones(len(pos), dtype=bool)
        out = np.full(len(keys), -1, dtype=np.int64)
        out[found] = self._codes[pos[found].astype(np.int64)]
        return out

    def group_for_new(self, writer_id: str) -> int:
        smallest = self.sizes.min()
        ties = [i for i, size in enumerate(self.sizes) if size == smallest]
        return min(ties, key=lambda i: zlib.crc32(f"{writer_id}/{self.file_ids[i]}".encode()))

    def route(
        self, keys: pa.Array | pa.ChunkedArray, writer_id: str, buckets: int | None = None
    ) -> Route:
        """Known keys to their group; new ones to the writer's smallest group, or with
        `buckets` to their bucket's group (the same in every task)."""
        codes = self.lookup(keys)
        new = codes < 0
        if new.any():
            if buckets is None:
                codes[new] = self.group_for_new(writer_id)
            else:
                codes[new] = self.bucket_codes(keys, buckets)[new]
        return Route(list(self.file_ids), codes, new)

    def bucket_codes(self, keys: pa.Array | pa.ChunkedArray, buckets: int) -> np.ndarray:
        """The code of each key's bucket group (`fg-NNNN`, one of `file_ids`)."""
        code_of = {fid: i for i, fid in enumerate(self.file_ids)}
        table = np.array([code_of[bucket_file_id(b)] for b in range(buckets)], dtype=np.int64)
        return table[bucket_of_keys(keys, buckets)]


def route_keys(
    keys: pa.Array | pa.ChunkedArray, op: str, buckets: int, index: DynamicIndex | None
) -> Route:
    """The file group of each row of a stream's micro-batch, decided before the writers run:
    the bucket index hashes; the dynamic `index` (the same snapshot in every routing task)
    keeps known keys in their group and places new keys (every key of an insert) by bucket,
    which is what each writer task then does (DynamicIndex.route with `buckets`)."""
    if index is None:
        return route_bucket(keys, buckets)
    if op == "insert":
        return Route(list(index.file_ids), index.bucket_codes(keys, buckets))
    return index.route(keys, "", buckets)


def owner_tasks(file_ids: list[str], tasks: int) -> np.ndarray:
    """The writer task that owns each file group: bucket `fg-NNNN` -> NNNN mod tasks (the
    sources' key routing, so usually nothing moves), any other group by a stable hash."""
    owners = []
    for fid in file_ids:
        number = fid[3:] if fid.startswith("fg-") else ""
        owners.append(int(number) % tasks if number.isdigit() else zlib.crc32(fid.encode()) % tasks)
    return np.array(owners, dtype=np.int64)
