import sys

import stream_fake_table

# Until engine.table lands, the stream is tested against a file-based stand-in.
try:
    from engine.table import Table, WriteStat  # noqa: F401
except ImportError:
    sys.modules["engine.table"] = stream_fake_table
