import json

from hypothesis import given
from hypothesis import strategies as st

from engine.stream.write_meta import EventBuffers, WriteMetaEvent

events = st.builds(
    WriteMetaEvent,
    task_id=st.integers(0, 3),
    checkpoint_id=st.integers(-1, 5),
    instant=st.just("20260101000000000"),
    write_stats=st.lists(st.fixed_dictionaries({"file_name": st.text(max_size=8)})).map(tuple),
    last_batch=st.booleans(),
    bootstrap=st.booleans(),
    attempt=st.integers(0, 3),
    metadata=st.fixed_dictionaries({"rows": st.integers(0, 100)}),
)


@given(events)
def test_event_json_round_trip(e):
    assert WriteMetaEvent.from_dict(json.loads(json.dumps(e.to_dict()))) == e


def test_merge_concatenates_and_sums():
    a = WriteMetaEvent(0, 1, "i", ({"f": 1},), metadata={"rows": 3, "min_offset": 5})
    b = WriteMetaEvent(
        0, 1, "i", ({"f": 2},), last_batch=True, metadata={"rows": 4, "min_offset": 2}
    )
    m = a.merge_with(b)
    assert m.write_stats == ({"f": 1}, {"f": 2}) and m.last_batch
    assert m.metadata == {"rows": 7, "min_offset": 2}


def test_buffers_ready_only_when_every_task_reported_last_batch():
    bufs = EventBuffers(parallelism=2)
    entry = bufs.init_new(3, "i")
    entry.buffer.add(WriteMetaEvent(0, 3, "i", ({"f": 1},), last_batch=True))
    assert bufs.ready_to_dict() == []
    entry.buffer.add(WriteMetaEvent(1, 3, "i", (), last_batch=True))
    (saved,) = bufs.ready_to_dict()
    restored = EventBuffers.entry_from_dict(json.loads(json.dumps(saved)))
    assert restored.buffer.write_stats() == [{"f": 1}]
    bufs.clear_task_from(0, 3)  # task-only failover voids task 0's report
    assert not entry.buffer.is_ready()
    assert [e.checkpoint_id for e in bufs.entries_before(4)] == [3]
