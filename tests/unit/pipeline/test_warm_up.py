"""The driver's warm-up job (harness/pipeline/driver.py) must make each Python worker
import the writer's modules before the run's clock starts: Spark pickles its function by
reference only if it lives in an importable module, not in the driver's __main__."""

from __future__ import annotations

import pickle
import subprocess
import sys

from pyspark import cloudpickle

from harness.pipeline.engine_task import warm_up_worker


def test_the_warm_up_function_travels_by_reference_to_the_writer_module() -> None:
    payload = cloudpickle.dumps(warm_up_worker)
    assert b"harness.pipeline.engine_task" in payload  # by reference: a short name
    # What a fresh worker does with it: unpickling imports the writer's modules.
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
            "print('engine.stream.writer' in sys.modules)",
        ],
        input=payload,
        capture_output=True,
        check=True,
    )
    assert loaded.stdout.strip() == b"True"
    assert list(pickle.loads(payload)(iter([1, 2]))) == [1, 2]
