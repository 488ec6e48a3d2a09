"""XREADGROUP ... CLAIM min-idle-time: argument parsing and its errors, with the texts
of the newest Redis (ported from redis/redis tests/unit/type/stream-cgroups.tcl: "CLAIM
with not integer / negative integer for min-idle-time", "CLAIM with different
position"). Redis 7.0 has no CLAIM (tests/differential.py DELIBERATE_DIFFERENCES)."""
from __future__ import annotations

import pytest

from engine import Engine, ManualClock, ResponseError

NOT_AN_INTEGER = "ERR min-idle-time is not an integer or out of range"
NEGATIVE = "ERR min-idle-time must be a positive integer"


@pytest.fixture
def clock():
    return ManualClock(1_700_000_000_000)


@pytest.fixture
def e(clock):
    eng = Engine(clock=clock)
    eng.execute("XADD", "mystream", "1-0", "f", "v1")
    eng.execute("XADD", "mystream", "2-0", "f", "v2")
    eng.execute("XGROUP", "CREATE", "mystream", "group1", "0")
    eng.execute("XREADGROUP", "GROUP", "group1", "consumer1", "COUNT", "1",
                "STREAMS", "mystream", ">")
    return eng


def error_of(e, *argv) -> str:
    with pytest.raises(ResponseError) as err:
        e.execute(*argv)
    return str(err.value)


@pytest.mark.parametrize("value", ["test", "5.5", "5,5", "10e", "+10", "*10", "10/2", "10*2",
                                   "10€", "-0", "-5.5", "-5,5", "-10e", "-10/2", "-10*2",
                                   "(-10)*2", "", " 10", "99999999999999999999"])
def test_not_an_integer(e, value):
    assert error_of(e, "XREADGROUP", "GROUP", "group1", "consumer1", "CLAIM", value,
                    "STREAMS", "mystream", ">") == NOT_AN_INTEGER


@pytest.mark.parametrize("value", ["-10", "-42", "-9223372036854775808"])
def test_negative(e, value):
    assert error_of(e, "XREADGROUP", "GROUP", "group1", "consumer1", "CLAIM", value,
                    "STREAMS", "mystream", ">") == NEGATIVE


def test_claim_anywhere_before_streams_and_the_last_one_wins(e, clock):
    clock.advance(100)
    head = ["XREADGROUP", "GROUP", "group1", "consumer1"]
    for n, argv in enumerate([
            head + ["COUNT", "1", "CLAIM", "50"],
            head + ["CLAIM", "50", "COUNT", "1"],
            head + ["CLAIM", "500", "COUNT", "1", "CLAIM", "60"],
            ["XREADGROUP", "CLAIM", "50", "GROUP", "group1", "consumer1", "COUNT", "1"]],
            start=1):
        reply = e.execute(*argv, "STREAMS", "mystream", ">")
        assert [(entry[0], entry[3]) for entry in reply[0][1]] == [(b"1-0", n)]
        clock.advance(100)


@pytest.mark.parametrize("argv, error", [
    # CLAIM takes the next argument as its value, whatever it is.
    (["GROUP", "group1", "consumer1", "CLAIM", "10", "CLAIM", "COUNT", "1",
      "STREAMS", "mystream", ">"], NOT_AN_INTEGER),
    (["CLAIM", "GROUP", "group1", "consumer1", "COUNT", "1", "STREAMS", "mystream", ">"],
     NOT_AN_INTEGER),
    (["GROUP", "group1", "consumer1", "CLAIM", "STREAMS", "mystream", ">"], NOT_AN_INTEGER),
    # After STREAMS everything is keys and IDs.
    (["GROUP", "group1", "consumer1", "COUNT", "1", "STREAMS", "mystream", "CLAIM", "50", ">"],
     "NOGROUP No such key 'CLAIM' or consumer group 'group1' in XREADGROUP with GROUP option"),
    (["GROUP", "group1", "consumer1", "COUNT", "1", "STREAMS", "mystream", "CLAIM", ">"],
     "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
     "specified."),
    (["GROUP", "group1", "consumer1", "COUNT", "1", "STREAMS", "mystream", ">", "CLAIM", "50"],
     "ERR Invalid stream ID specified as stream command argument"),
    (["GROUP", "group1", "CLAIM", "50", "consumer1", "STREAMS", "mystream", ">"],
     "ERR syntax error"),
    (["GROUP", "nosuchgroup", "consumer1", "CLAIM", "50", "STREAMS", "mystream", ">"],
     "NOGROUP No such key 'mystream' or consumer group 'nosuchgroup' in XREADGROUP with "
     "GROUP option"),
])
def test_positions_and_errors(e, argv, error):
    assert error_of(e, "XREADGROUP", *argv) == error


def test_xread_has_no_claim(e):
    assert error_of(e, "XREAD", "CLAIM", "10", "STREAMS", "mystream", "0") == (
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")
