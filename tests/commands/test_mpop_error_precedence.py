"""BLMPOP and BZMPOP check their arguments in redis-server 7.0's order: numkeys, the
LEFT|RIGHT (MIN|MAX) word, COUNT, and only then the timeout; every combination of
bad arguments gets the oracle's reply."""
from __future__ import annotations

import itertools

import pytest

from differential import run_both

TIMEOUTS = ["0", "-1", "x", "0.01"]
NUMKEYS = ["1", "0", "-1", "x", "3"]
COUNTS = [(), ("COUNT", "0"), ("COUNT", "2"), ("COUNT",), ("COUNT", "1", "COUNT", "1"), ("XX",)]


def combinations(command: str, ends: tuple[str, str]) -> list[tuple]:
    wheres = [ends[0], ends[1].lower(), "UP"]
    return [(command, timeout, numkeys, "k", where, *count)
            for timeout, numkeys, where, count in itertools.product(TIMEOUTS, NUMKEYS, wheres, COUNTS)]


@pytest.mark.parametrize("command, ends, filler", [
    ("BLMPOP", ("LEFT", "RIGHT"), ("RPUSH", "k", "a", "b")),
    ("BZMPOP", ("MIN", "MAX"), ("ZADD", "k", "1", "a", "2", "b")),
])
def test_mpop_error_precedence(command, ends, filler, engine, oracle) -> None:  # noqa: ANN001
    assert run_both(engine, oracle, [("BLMPOP", "-1", "0", "l", "RIGHT")]).steps[0].oracle \
        .text == "ERR numkeys should be greater than 0"
    cases = combinations(command, ends)
    # with data (a timeout never waits) and without (only errors or a nil after 10 ms)
    run_both(engine, oracle, [step for case in cases for step in (filler, case)], label=command)
    run_both(engine, oracle, [("DEL", "k")] + [c for c in cases if c[1] != "0"], label=command)
