"""XNACK (Redis 8.8): pending entries handed back to their group, owned by no consumer
and claimable at once. Redis 7.0 has no XNACK, so these tests follow the newest docs
(redis.io XNACK page, redis/docs content/commands/xnack.md, redis/redis#14797); the log
of an XNACK is 7.0's own XCLAIM, and redis-server 7.0 loads an AOF holding it."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

import pytest
import redis

from engine import EmbeddedRedis, Engine, ManualClock, ResponseError
from native.groups_probe import verify_group
from servers import RedisServer, SluiceServer, needs_redis
from differential import RedisOracle
from engine_states import grouped_streams

T0 = 1_700_000_000_000
LLONG_MAX_STORED = 2 ** 47 - 1      # FATAL's LLONG_MAX, as a PendingEntry holds it


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def e(clock):
    """Stream s with 1-0..5-0, group g; c1 read 1-0..3-0 at T0, the clock is then T0+100."""
    eng = grouped_streams(clock, entries=5)
    eng.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
    clock.advance(100)
    return eng


def pending(e, key="s", group="g"):
    """XPENDING's rows: (id, consumer, idle, deliveries)."""
    return [tuple(row) for row in e.execute("XPENDING", key, group, "-", "+", "100")]


def check(e, key=b"s", group=b"g"):
    verify_group(e.databases[0].peek(key).groups[group])


# -- modes and counts -----------------------------------------------------------------

def test_fail_releases_entries_to_no_consumer(e):
    assert e.execute("XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "2-0") == 2
    assert pending(e) == [(b"1-0", b"", -1, 1), (b"2-0", b"", -1, 1), (b"3-0", b"c1", 100, 1)]
    # The summary lists owners: the released entries have none.
    assert e.execute("XPENDING", "s", "g") == [3, b"1-0", b"3-0", [[b"c1", b"1"]]]
    # c1's history no longer holds them.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0")
    assert [entry[0] for entry in reply[0][1]] == [b"3-0"]
    check(e)


def test_silent_undoes_a_delivery_and_stops_at_zero(e):
    assert e.execute("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0") == 1
    assert pending(e)[0] == (b"1-0", b"", -1, 0)
    assert e.execute("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0") == 1     # still pending
    assert pending(e)[0] == (b"1-0", b"", -1, 0)


def test_fatal_sets_the_largest_count(e):
    assert e.execute("XNACK", "s", "g", "fatal", "IDS", "1", "3-0") == 1
    assert pending(e)[2] == (b"3-0", b"", -1, LLONG_MAX_STORED)


def test_retrycount_overrides_the_mode(e):
    assert e.execute("XNACK", "s", "g", "FATAL", "IDS", "1", "1-0", "RETRYCOUNT", "5") == 1
    assert e.execute("XNACK", "s", "g", "SILENT", "RETRYCOUNT", "0", "IDS", "1", "2-0") == 1
    assert [row[3] for row in pending(e)] == [5, 0, 1]


def test_only_pending_entries_count(e):
    # 4-0 exists but was never delivered, 9-0 does not exist, 1-0 is pending.
    assert e.execute("XNACK", "s", "g", "FAIL", "IDS", "3", "4-0", "9-0", "1-0") == 1
    assert [row[0] for row in pending(e)] == [b"1-0", b"2-0", b"3-0"]


def test_entries_gone_from_the_stream_are_left_alone(e):
    e.execute("XDEL", "s", "2-0")
    assert e.execute("XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "2-0") == 1
    assert pending(e)[1] == (b"2-0", b"c1", 100, 1)


def test_force_creates_unowned_entries(e):
    reply = e.execute("XNACK", "s", "g", "FAIL", "IDS", "3", "4-0", "9-0", "1-0", "FORCE")
    assert reply == 2
    assert pending(e) == [(b"1-0", b"", -1, 1), (b"2-0", b"c1", 100, 1),
                          (b"3-0", b"c1", 100, 1), (b"4-0", b"", -1, 0)]
    assert e.execute("XNACK", "s", "g", "FATAL", "IDS", "1", "5-0", "FORCE") == 1
    assert pending(e)[4] == (b"5-0", b"", -1, LLONG_MAX_STORED)
    # FORCE does not move the group: 4-0 and 5-0 are still new for `>`.
    assert e.execute("XINFO", "GROUPS", "s")[0][7] == b"3-0"
    check(e)


def test_nacked_again_by_anyone(e):
    e.execute("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0")
    assert e.execute("XNACK", "s", "g", "FAIL", "IDS", "1", "1-0") == 1
    assert pending(e)[0] == (b"1-0", b"", -1, 1)


# -- redelivery ------------------------------------------------------------------------

def test_released_entries_are_claimed_first_and_at_once(e, clock):
    e.execute("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0")
    # `>` does not deliver a released entry again: only new entries.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", ">")
    assert [entry[0] for entry in reply[0][1]] == [b"4-0"]
    clock.advance(1000)
    # Everything of c1 is idle 1100, yet the released 2-0 comes first, whatever min-idle.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c3", "CLAIM", "1000", "COUNT", "2",
                      "STREAMS", "s", ">")
    assert [(entry[0], entry[3]) for entry in reply[0][1]] == [(b"2-0", 1), (b"1-0", 1)]
    assert pending(e)[1] == (b"2-0", b"c3", 0, 2)
    check(e)


def test_released_entries_are_claimable_by_xclaim_and_xautoclaim(e):
    e.execute("XNACK", "s", "g", "SILENT", "IDS", "2", "1-0", "3-0")
    assert e.execute("XCLAIM", "s", "g", "c2", "3600000", "1-0", "JUSTID") == [b"1-0"]
    reply = e.execute("XAUTOCLAIM", "s", "g", "c3", "3600000", "0", "JUSTID")
    assert reply[1] == [b"3-0"]
    assert [(row[0], row[1], row[3]) for row in pending(e)] == [
        (b"1-0", b"c2", 0), (b"2-0", b"c1", 1), (b"3-0", b"c3", 0)]


# -- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("args, error", [
    (["MAYBE", "IDS", "1", "1-0"], "ERR mode must be SILENT, FAIL, or FATAL"),
    (["IDS", "1", "1-0", "FAIL"], "ERR mode must be SILENT, FAIL, or FATAL"),
    (["FAIL", "IDS", "0", "1-0"], "ERR numids must be a positive integer"),
    (["FAIL", "IDS", "-1", "1-0"], "ERR numids must be a positive integer"),
    (["FAIL", "IDS", "x", "1-0"], "ERR numids must be a positive integer"),
    (["FAIL", "IDS", "3", "1-0"], "ERR number of IDs doesn't match numids"),
    (["FAIL", "IDS", "1", "1-0", "2-0"], "ERR Unrecognized XNACK option '2-0'"),
    (["FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1"], "ERR Invalid RETRYCOUNT value, must be >= 0"),
    (["FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "x"], "ERR value is not an integer or out of range"),
    (["FAIL", "IDS", "1", "1-0", "BOGUS"], "ERR Unrecognized XNACK option 'BOGUS'"),
    (["FAIL", "FORCE", "RETRYCOUNT", "1"], "ERR syntax error, expected IDS keyword"),
    (["FAIL", "IDS", "1", "zz"], "ERR Invalid stream ID specified as stream command argument"),
])
def test_argument_errors(e, args, error):
    before = pending(e)
    with pytest.raises(ResponseError) as err:
        e.execute("XNACK", "s", "g", *args)
    assert str(err.value) == error
    assert pending(e) == before


def test_a_bad_id_anywhere_changes_nothing(e):
    with pytest.raises(ResponseError, match="Invalid stream ID"):
        e.execute("XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "zz")
    assert pending(e)[0][1] == b"c1"


def test_missing_group_key_and_wrong_type(e):
    with pytest.raises(ResponseError, match="^NOGROUP No such key 'nope' or consumer group 'g'$"):
        e.execute("XNACK", "nope", "g", "FAIL", "IDS", "1", "1-0")
    with pytest.raises(ResponseError, match="^NOGROUP No such key 's' or consumer group 'x'$"):
        e.execute("XNACK", "s", "x", "FAIL", "IDS", "1", "1-0")
    e.execute("SET", "str", "v")
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        e.execute("XNACK", "str", "g", "FAIL", "IDS", "1", "1-0")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'xnack'"):
        e.execute("XNACK", "s", "g", "FAIL", "IDS", "1")


def test_command_table_record():
    from engine.commands.table import COMMANDS
    record = COMMANDS[b"xnack"]
    assert (record.arity, record.flags, record.first_key, record.last_key, record.step) == (
        -7, ("write", "fast"), 1, 1, 1)
    assert record.since == "8.8.0"


# -- effects and persistence -----------------------------------------------------------

def test_effects_replay_to_the_same_pel(clock):
    effects: list = []
    eng = Engine(clock=clock)
    eng.add_effect_listener(lambda db, batch: effects.extend(batch))
    for i in range(1, 6):
        eng.execute("XADD", "s", f"{i}-0", "f", f"v{i}")
    eng.execute("XGROUP", "CREATE", "s", "g", "0")
    eng.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "3", "STREAMS", "s", ">")
    clock.advance(100)
    eng.execute("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0")
    eng.execute("XNACK", "s", "g", "FATAL", "IDS", "2", "2-0", "5-0", "FORCE")
    assert [e[0] for e in effects[-3:]] == [b"XCLAIM"] * 3
    assert effects[-3][3:10] == [b"", b"0", b"1-0", b"TIME", b"0", b"RETRYCOUNT", b"0"]
    clock.advance(5000)                  # the replay runs later: nothing depends on it
    replica = Engine(clock=clock)
    for argv in effects:
        replica.execute(*argv)
    assert pending(replica) == pending(eng)
    check(replica)


@needs_redis
def test_redis_7_loads_an_aof_with_xnack(tmp_path):
    eng = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                 appendfsync="no")
    for i in range(1, 6):
        eng.execute("XADD", "s", f"{i}-0", "f", f"v{i}")
    eng.execute("XGROUP", "CREATE", "s", "g", "0")
    eng.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "4", "STREAMS", "s", ">")
    eng.execute("XNACK", "s", "g", "SILENT", "IDS", "1", "1-0")
    eng.execute("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0", "RETRYCOUNT", "7")
    eng.execute("BGREWRITEAOF")             # a RESP base holding released entries ...
    eng.execute("XNACK", "s", "g", "FATAL", "IDS", "2", "3-0", "5-0", "FORCE")   # ... and more
    ours = [(row[0], row[1], row[3]) for row in pending(eng)]
    eng.close(save=False)
    again = Engine(dir=str(tmp_path), appendonly=True)
    assert [(row[0], row[1], row[3]) for row in pending(again)] == ours
    again.close(save=False)
    assert ours == [(b"1-0", b"", 0), (b"2-0", b"", 7), (b"3-0", b"", LLONG_MAX_STORED),
                    (b"4-0", b"c1", 1), (b"5-0", b"", LLONG_MAX_STORED)]
    with RedisServer(["--save", "", "--appendonly", "yes"], workdir=tmp_path) as srv:
        conn = RedisOracle("127.0.0.1", srv.port)
        try:
            theirs = conn.execute("XPENDING", "s", "g", "-", "+", 100)
            assert [(row[0], row[1], row[3]) for row in theirs] == ours
            # Delivered at time 0: the oldest deliveries, claimable by any min-idle.
            assert conn.execute("XAUTOCLAIM", "s", "g", "c9", 10 ** 9, "0", "JUSTID")[1] == [
                b"1-0", b"2-0", b"3-0", b"5-0"]
        finally:
            conn.close()


# -- the server -------------------------------------------------------------------------

@contextmanager
def two_clients(where: str) -> Iterator[tuple[redis.Redis, redis.Redis]]:
    """Two clients of one server: sluice-server's ("server") or an engine's, through
    EmbeddedRedis ("embedded"), where a reader blocks in its own thread."""
    if where == "embedded":
        eng = Engine()
        yield EmbeddedRedis(engine=eng), EmbeddedRedis(engine=eng)
        return
    with SluiceServer() as srv:
        r, other = redis.Redis(port=srv.port), redis.Redis(port=srv.port)
        try:
            yield r, other
        finally:
            r.close()
            other.close()


@pytest.mark.parametrize("where, mode, deliveries",
                         [("server", "FAIL", 1), ("embedded", "SILENT", 0)])
def test_xnack_wakes_a_blocked_claim(where, mode, deliveries):
    """A reader blocked on XREADGROUP ... CLAIM with a long min-idle-time is served as
    soon as XNACK makes an entry claimable, not when its timer would fire."""
    with two_clients(where) as (r, other):
        r.xadd("q", {"f": 1}, id="1-0")
        r.xgroup_create("q", "g", id="0")
        r.xreadgroup("g", "c1", {"q": ">"})
        nack = threading.Timer(0.2, other.execute_command,
                               ("XNACK", "q", "g", mode, "IDS", "1", "1-0"))
        nack.start()
        try:
            start = time.monotonic()
            reply = r.xreadgroup("g", "c2", {"q": ">"}, claim_min_idle_time=600_000,
                                 block=5000)
            assert reply[0][1][0][0] == b"1-0" and reply[0][1][0][3] == deliveries
            assert time.monotonic() - start < 2
        finally:
            nack.join()
