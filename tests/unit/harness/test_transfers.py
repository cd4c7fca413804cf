"""The final balances against the transfers the batch writers reported: a reported
outcome is what the client saw, and an error may still have committed."""

from harness.checks.transfers import MAX_INDETERMINATE, reconcile


def _txn(source: int, target: int, amount: int, outcome: str = "ok") -> dict:
    return {"op": "transfer", "accounts": [source, target], "amount": amount, "outcome": outcome}


OPENING = {0: 100, 1: 100, 2: 100}


def test_every_committed_transfer_once_is_valid() -> None:
    txns = [_txn(0, 1, 10), _txn(1, 2, 5), _txn(2, 0, 1, "conflict")]
    verdict, evidence = reconcile({0: 90, 1: 105, 2: 105}, txns, 3, 100)
    assert verdict == "valid"
    assert (evidence["committed"], evidence["aborted"], evidence["indeterminate"]) == (2, 1, 0)
    assert evidence["reported_failed_but_applied"] == []


def test_an_error_that_committed_is_named_and_one_that_did_not_is_fine() -> None:
    txns = [_txn(0, 1, 10), _txn(0, 2, 7, "error"), _txn(1, 2, 3, "error")]
    verdict, evidence = reconcile({0: 83, 1: 110, 2: 107}, txns, 3, 100)
    assert verdict == "valid"
    (applied,) = evidence["reported_failed_but_applied"]
    assert applied["accounts"] == [0, 2] and applied["amount"] == 7


def test_a_lost_update_keeps_the_total_but_not_the_balances() -> None:
    # Two committed transfers out of account 0; the second overwrote the first's balance.
    txns = [_txn(0, 1, 10), _txn(0, 2, 20)]
    verdict, evidence = reconcile({0: 80, 1: 100, 2: 120}, txns, 3, 100)
    assert verdict == "invalid"
    assert evidence["unexplained_difference"] == {0: 10, 1: -10, 2: 0}


def test_a_transfer_applied_twice_or_an_aborted_one_applied_is_invalid() -> None:
    twice = reconcile({0: 80, 1: 120, 2: 100}, [_txn(0, 1, 10)], 3, 100)
    assert twice[0] == "invalid"
    aborted = reconcile({0: 90, 1: 110, 2: 100}, [_txn(0, 1, 10, "conflict")], 3, 100)
    assert aborted[0] == "invalid"  # OCC aborted it before its commit: it must not show


def test_too_many_indeterminate_transfers_are_unknown_not_a_guess() -> None:
    txns = [_txn(0, 1, 1, "error") for _ in range(MAX_INDETERMINATE + 1)]
    verdict, evidence = reconcile(OPENING, txns, 3, 100)
    assert verdict == "unknown" and "too many" in evidence["reason"]
