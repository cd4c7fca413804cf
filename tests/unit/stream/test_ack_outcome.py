"""The coordinator's answer to an ACK says what it did (the harness records it as the
evidence of delay_ack and stale_ack): the instants it committed, or None for a stale ACK."""

from stream_harness import StreamHarness


def test_an_ack_answers_with_the_instants_it_committed_and_a_stale_one_with_none(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b1 = h.run_batch(ack=False)  # its ACK is late
    b2 = h.run_batch(ack=False)
    before = len(h.commits())
    committed = h.coordinator.notify_checkpoint_complete(b2).result(timeout=10)
    new = h.commits()[before:]
    assert committed == [c["instant"] for c in new] and len(committed) == 2  # b1's and b2's
    assert h.coordinator.notify_checkpoint_complete(b1).result(timeout=10) is None  # stale
    assert len(h.commits()) == before + 2
