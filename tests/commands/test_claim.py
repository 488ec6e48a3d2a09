"""XREADGROUP ... CLAIM: ordering, COUNT split, reply fields, deleted entries, NOACK,
several streams, the idle boundary, and pel_by_time kept exact throughout."""
import pytest

from engine import Engine, ManualClock, ResponseError
from engine_states import grouped_streams
from native.groups_probe import pending_by_time, verify_group

T0 = 1_700_000_000_000


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def e(clock):
    return grouped_streams(clock, entries=10)


def group(e, key=b"s", name=b"g"):
    return e.databases[0].peek(key).groups[name]


def ids(reply):
    return [item[0] for item in reply[0][1]]


def check(e, key=b"s", name=b"g"):
    g = group(e, key, name)
    verify_group(g)
    by_time = pending_by_time(g)
    def numeric(item):
        ms, seq = item[1].split("-")
        return item[0], int(ms), int(seq)
    assert by_time == sorted(by_time, key=numeric)
    return by_time


def test_claims_oldest_delivery_first_then_reads_new(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
    # Make 3-0 the oldest delivery: claim order follows delivery time, not ID.
    e.execute("XCLAIM", "s", "g", "c1", "0", "3-0", "TIME", T0 - 500, "JUSTID")
    clock.advance(1000)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "5", "CLAIM", "900",
                      "STREAMS", "s", ">")
    assert ids(reply) == [b"3-0", b"1-0", b"2-0", b"4-0", b"5-0"]
    entries = reply[0][1]
    assert entries[0] == [b"3-0", [b"f", b"v3"], 1500, 1]
    assert entries[1] == [b"1-0", [b"f", b"v1"], 1000, 1]
    assert entries[3] == [b"4-0", [b"f", b"v4"], 0, 0]
    pending = e.execute("XPENDING", "s", "g", "-", "+", "10")
    assert [p[1] for p in pending] == [b"c2"] * 5
    assert {p[0]: p[3] for p in pending} == {b"1-0": 2, b"2-0": 2, b"3-0": 2,
                                             b"4-0": 1, b"5-0": 1}
    assert all(p[2] == 0 for p in pending)
    assert check(e) == [(T0 + 1000, i) for i in ("1-0", "2-0", "3-0", "4-0", "5-0")]


def test_count_used_up_by_claims_reads_nothing_new(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "4", "STREAMS", "s", ">")
    clock.advance(100)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "2", "CLAIM", "50",
                      "STREAMS", "s", ">")
    assert ids(reply) == [b"1-0", b"2-0"]
    info = e.execute("XINFO", "GROUPS", "s")[0]
    assert info[info.index(b"last-delivered-id") + 1] == b"4-0"
    check(e)


def test_without_count_claims_all_idle_and_reads_all_new(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "4", "STREAMS", "s", ">")
    clock.advance(100)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "100", "STREAMS", "s", ">")
    assert ids(reply) == [f"{i}-0".encode() for i in range(1, 11)]
    assert e.execute("XPENDING", "s", "g")[0] == 10
    check(e)


def test_idle_boundary_is_inclusive(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">")
    clock.advance(100)
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">")
    clock.advance(99)
    # 1-0 is idle 199, 2-0 idle 99: min-idle 199 takes exactly 1-0.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "CLAIM", "199",
                      "STREAMS", "s", ">")
    assert reply[0][1][0][:1] == [b"1-0"] and reply[0][1][0][2] == 199
    reply = e.execute("XREADGROUP", "GROUP", "g", "c3", "COUNT", "1", "CLAIM", "100",
                      "STREAMS", "s", ">")
    assert ids(reply) == [b"3-0"]  # 2-0 is one ms short: a new entry comes instead
    check(e)


def test_deleted_entries_leave_the_pel_and_are_not_returned(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
    e.execute("XDEL", "s", "2-0")
    clock.advance(10)
    effects = []
    e.add_effect_listener(lambda db, eff: effects.extend(eff))
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "2", "CLAIM", "5",
                      "STREAMS", "s", ">")
    assert ids(reply) == [b"1-0", b"3-0"]
    assert e.execute("XPENDING", "s", "g")[0] == 2
    assert [b"XACK", b"s", b"g", b"2-0"] in effects
    check(e)


def test_noack_does_not_apply_to_claimed_entries(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
    clock.advance(10)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "4", "NOACK", "CLAIM", "5",
                      "STREAMS", "s", ">")
    assert ids(reply) == [b"1-0", b"2-0", b"3-0", b"4-0"]
    pending = e.execute("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1]) for p in pending] == [(b"1-0", b"c2"), (b"2-0", b"c2")]
    check(e)


def test_several_streams_each_claim_then_read(e, clock):
    for i in range(1, 4):
        e.execute("XADD", "t", f"{i}-0", "g", f"w{i}")
    e.execute("XGROUP", "CREATE", "t", "g", "0")
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", "t", ">", ">")
    clock.advance(50)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "2", "CLAIM", "50",
                      "STREAMS", "s", "t", ">", ">")
    assert [r[0] for r in reply] == [b"s", b"t"]
    assert [x[0] for x in reply[0][1]] == [b"1-0", b"2-0"]
    assert [x[0] for x in reply[1][1]] == [b"1-0", b"2-0"]
    assert [x[2:] for x in reply[1][1]] == [[50, 1], [0, 0]]
    check(e)
    check(e, b"t")


def test_claim_is_ignored_for_history_reads(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
    clock.advance(1000)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c1", "CLAIM", "10", "STREAMS", "s", "0")
    assert reply == [[b"s", [[b"1-0", [b"f", b"v1"]], [b"2-0", [b"f", b"v2"]]]]]
    check(e)


def test_nothing_claimable_and_nothing_new_is_nil(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    assert e.execute("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "10", "STREAMS", "s", ">") is None


def test_claim_argument_errors(e):
    with pytest.raises(ResponseError, match="only supported by XREADGROUP"):
        e.execute("XREAD", "CLAIM", "10", "STREAMS", "s", "0")
    with pytest.raises(ResponseError, match="not an integer"):
        e.execute("XREADGROUP", "GROUP", "g", "c", "CLAIM", "x", "STREAMS", "s", ">")
    with pytest.raises(ResponseError):
        e.execute("XREADGROUP", "GROUP", "g", "c", "CLAIM", "-1", "STREAMS", "s", ">")


def test_pel_by_time_follows_every_pel_change(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "6", "STREAMS", "s", ">")
    clock.advance(5)
    e.execute("XCLAIM", "s", "g", "c2", "0", "1-0", "2-0")
    clock.advance(5)
    e.execute("XAUTOCLAIM", "s", "g", "c3", "0", "3-0", "COUNT", "1")
    e.execute("XACK", "s", "g", "4-0")
    check(e)
    assert [i for _, i in check(e)] == ["5-0", "6-0", "1-0", "2-0", "3-0"]
    e.execute("XGROUP", "DELCONSUMER", "s", "g", "c2")
    assert [i for _, i in check(e)] == ["5-0", "6-0", "3-0"]
    e.execute("XTRIM", "s", "MAXLEN", "0")
    clock.advance(1)
    e.execute("XREADGROUP", "GROUP", "g", "c1", "CLAIM", "0", "STREAMS", "s", ">")
    assert check(e) == []


@pytest.mark.parametrize("seed", range(8))
def test_claims_in_chunks_match_a_model(seed):
    """Hundreds of candidates (several chunks of 64), spread over many delivery times,
    some deleted from the stream, min-idle 0 included: the reply is exactly the live
    entries idle >= min-idle, oldest delivery first (ties by ID), at most COUNT, each
    once, with its idle time and previous delivery count; the deleted ones leave the
    PEL; pel_by_time stays exact."""
    import random
    rng = random.Random(seed)
    clock = ManualClock(T0)
    e = Engine(clock=clock)
    n = rng.randrange(150, 600)
    for i in range(1, n + 1):
        e.execute("XADD", "s", f"{i}-0", "f", f"v{i}")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    delivered = {}                      # id -> (delivery time, delivery count)
    for lo in range(0, n, 50):         # delivered in batches, one ms apart or more
        clock.advance(rng.choice((0, 1, 5)))
        rep = e.execute("XREADGROUP", "GROUP", "g", rng.choice(["c1", "c2"]), "COUNT", 50,
                        "STREAMS", "s", ">")
        for entry in rep[0][1]:
            delivered[entry[0]] = (clock.now_ms(), 1)
    gone = set(rng.sample(sorted(delivered), n // 10))
    e.execute("XDEL", "s", *gone)
    clock.advance(rng.choice((0, 3, 40)))
    now = clock.now_ms()
    min_idle = rng.choice((0, 0, 1, 10, 30))
    count = rng.choice((1, 63, 64, 65, 200, n))
    order = sorted(delivered, key=lambda k: (delivered[k][0], int(k.split(b"-")[0])))
    eligible = [k for k in order if now - delivered[k][0] >= min_idle]
    expected = [k for k in eligible if k not in gone][:count]
    rep = e.execute("XREADGROUP", "GROUP", "g", "c3", "COUNT", count, "CLAIM", min_idle,
                    "STREAMS", "s", ">")
    got = rep[0][1] if rep else []
    claimed = [entry for entry in got if entry[2] or entry[3]]      # new ones carry 0, 0
    assert [entry[0] for entry in claimed] == expected
    for entry in claimed:
        assert entry[1] == [b"f", b"v" + entry[0].split(b"-")[0]]
        assert entry[2] == now - delivered[entry[0]][0] and entry[3] == 1
    # deleted entries scanned before the last claimed one left the PEL
    if expected:
        last = eligible.index(expected[-1])
        scanned_gone = {k for k in eligible[:last] if k in gone}
        pending = {p[0] for p in e.execute("XPENDING", "s", "g", "-", "+", n)}
        assert not scanned_gone & pending
    check(e)
