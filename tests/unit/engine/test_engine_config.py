from __future__ import annotations

import json

import pytest

from engine.config import Safety, TableConfig
from engine.errors import ConfigError


def test_defaults_all_safe():
    assert all(Safety().to_dict().values())
    assert len(Safety().to_dict()) == 15


def test_json_round_trip():
    s = Safety(occ=False, truetime_wait=False)
    assert Safety.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    c = TableConfig(
        table_type="mor", key_field="k", file_groups=3, index="dynamic", ordering_field="ts"
    )
    assert TableConfig.from_dict(json.loads(json.dumps(c.to_dict()))) == c


@pytest.mark.parametrize(
    "data, match",
    [
        ({"table_type": "xyz"}, "table.type"),
        ({"index": "hash"}, "table.index"),
        ({"file_groups": 0}, "file_groups"),
        ({"file_groups": True}, "file_groups"),
        ({"file_groups": "8"}, "file_groups"),
        ({"key_field": ""}, "table.key"),
        ({"filegroups": 8}, "unknown table key"),
    ],
)
def test_bad_table_config(data, match):
    with pytest.raises(ConfigError, match=match):
        TableConfig.from_dict(data)


def test_bad_safety():
    with pytest.raises(ConfigError, match=r"unknown safety key.*occ"):
        Safety.from_dict({"oc": True})
    with pytest.raises(ConfigError, match=r"safety\.occ"):
        Safety.from_dict({"occ": "yes"})
