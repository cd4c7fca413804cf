"""Engine benchmarks may run on both storage backends (a local folder, moto's S3 server)."""

from tests.unit.engine.s3_helpers import s3_location, s3_server, storage_root  # noqa: F401
