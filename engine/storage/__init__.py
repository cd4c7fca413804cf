"""The table's storage: `Storage` (engine/storage/storage.py: paths, fault hooks, retries
after a lost response, verified writes, Parquet) over one backend (`backend.py`: the
protocol and the contract every backend keeps; `local.py` a folder, `s3.py` an object
store with `s3_objects.py` and `s3_folders.py`)."""

from engine.storage.backend import TEMP_PREFIX, Encoder, ResponseLostError
from engine.storage.storage import OpenWrite, Storage

__all__ = ["TEMP_PREFIX", "Encoder", "OpenWrite", "ResponseLostError", "Storage"]
