"""Cases of Redis's own test units for what branch ops25 fixed or added, ported one test
function per Tcl `test` and run against sluice-server and redis-server 7.0 alike:
tests/unit/pubsubshard.tcl (sharded pub/sub), tests/unit/multi.tcl (SWAPDB and WATCH),
tests/unit/pubsub.tcl (the `new` key event), tests/unit/type/string.tcl and incr.tcl
(string encodings after APPEND/SETRANGE/INCR), tests/unit/type/list.tcl and zset.tcl
(BLMPOP/BZMPOP argument errors). Cases needing DEBUG or replication are not ported."""
from __future__ import annotations

import pytest

from redis_units import Conn
from servers import SluiceServer


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.fixture(params=["sluice", "redis"])
def r(request, sluice, redis_server):
    conn = Conn(sluice.port if request.param == "sluice" else redis_server[1])
    conn("FLUSHALL")
    conn("CONFIG", "SET", "notify-keyspace-events", "")
    yield conn
    conn("CONFIG", "SET", "notify-keyspace-events", "")
    conn("SELECT", 9)
    conn.close()


def subscribe(client: Conn, command: str, *channels: str) -> list:
    """What the Tcl helpers ssubscribe/sunsubscribe/psubscribe return: the counts of
    the confirmations."""
    client.send(command, *channels)
    return [client.read()[2] for _ in (channels or [None])]


# -- pubsubshard.tcl -------------------------------------------------------------------

def test_spublish_ssubscribe_basics(r):
    rd1 = r.deferred()
    assert subscribe(rd1, "SSUBSCRIBE", "chan1") == [1]
    assert subscribe(rd1, "SSUBSCRIBE", "chan2") == [2]
    assert r("SPUBLISH", "chan1", "hello") == 1
    assert r("SPUBLISH", "chan2", "world") == 1
    assert rd1.read() == ["smessage", "chan1", "hello"]
    assert rd1.read() == ["smessage", "chan2", "world"]
    subscribe(rd1, "SUNSUBSCRIBE", "chan1")
    assert r("SPUBLISH", "chan1", "hello") == 0
    assert r("SPUBLISH", "chan2", "world") == 1
    assert rd1.read() == ["smessage", "chan2", "world"]
    subscribe(rd1, "SUNSUBSCRIBE", "chan2")
    assert r("SPUBLISH", "chan1", "hello") == 0
    assert r("SPUBLISH", "chan2", "world") == 0
    rd1.close()


def test_spublish_ssubscribe_with_two_clients(r):
    rd1, rd2 = r.deferred(), r.deferred()
    assert subscribe(rd1, "SSUBSCRIBE", "chan1") == [1]
    assert subscribe(rd2, "SSUBSCRIBE", "chan1") == [1]
    assert r("SPUBLISH", "chan1", "hello") == 2
    assert rd1.read() == ["smessage", "chan1", "hello"]
    assert rd2.read() == ["smessage", "chan1", "hello"]
    assert r("PUBSUB", "SHARDNUMSUB", "chan1") == ["chan1", 2]
    assert r("PUBSUB", "SHARDCHANNELS") == ["chan1"]
    rd1.close()
    rd2.close()


def test_spublish_ssubscribe_after_unsubscribe_without_arguments(r):
    rd1 = r.deferred()
    assert subscribe(rd1, "SSUBSCRIBE", "chan1") == [1]
    assert subscribe(rd1, "SSUBSCRIBE", "chan2") == [2]
    assert subscribe(rd1, "SSUBSCRIBE", "chan3") == [3]
    assert subscribe(rd1, "SUNSUBSCRIBE") == [2]      # (then 1, 0 follow)
    assert [rd1.read()[2] for _ in range(2)] == [1, 0]
    assert [r("SPUBLISH", c, "hello") for c in ("chan1", "chan2", "chan3")] == [0, 0, 0]
    rd1.close()


def test_ssubscribe_to_one_channel_more_than_once(r):
    rd1 = r.deferred()
    assert subscribe(rd1, "SSUBSCRIBE", "chan1", "chan1", "chan1") == [1, 1, 1]
    assert r("SPUBLISH", "chan1", "hello") == 1
    assert rd1.read() == ["smessage", "chan1", "hello"]
    rd1.close()


def test_sunsubscribe_from_non_subscribed_channels(r):
    rd1 = r.deferred()
    for channel in ("foo", "bar", "quux"):
        assert subscribe(rd1, "SUNSUBSCRIBE", channel) == [0]
    rd1.close()


def test_pubsub_command_basics(r):
    assert r("PUBSUB", "SHARDNUMSUB", "abc", "def") == ["abc", 0, "def", 0]


def test_spublish_ssubscribe_with_publish_subscribe(r):
    rd1, rd2 = r.deferred(), r.deferred()
    assert subscribe(rd1, "SSUBSCRIBE", "chan1") == [1]
    assert subscribe(rd2, "SUBSCRIBE", "chan1") == [1]
    assert r("SPUBLISH", "chan1", "hello") == 1
    assert r("PUBLISH", "chan1", "hello") == 1
    assert r("PUBSUB", "SHARDNUMSUB", "chan1") == ["chan1", 1]
    assert r("PUBSUB", "NUMSUB", "chan1") == ["chan1", 1]
    assert r("PUBSUB", "SHARDCHANNELS") == ["chan1"]
    assert r("PUBSUB", "CHANNELS") == ["chan1"]
    rd1.close()
    rd2.close()


# -- multi.tcl -------------------------------------------------------------------------

@pytest.mark.parametrize("where", [0, 1], ids=["that_exist", "that_do_not_exist"])
def test_swapdb_is_able_to_touch_the_watched_keys(r, where):
    """x, watched in db 0, is there (SWAPDB "deletes" it) or in db 1 (SWAPDB "creates" it)."""
    r("SELECT", where)
    r("SET", "x", 30)
    r("SELECT", 0)
    r("WATCH", "x")
    r("SWAPDB", 0, 1)
    r("MULTI")
    r("PING")
    assert r("EXEC") is None


def test_watch_is_able_to_remember_the_db_a_key_belongs_to(r):
    r("SELECT", 5)
    r("SET", "x", 30)
    r("WATCH", "x")
    r("SELECT", 1)
    r("SET", "x", 10)
    r("SELECT", 5)
    r("MULTI")
    r("PING")
    assert r("EXEC") == ["PONG"]


# -- pubsub.tcl ------------------------------------------------------------------------

def test_keyspace_notifications_new_key_test(r):
    r("CONFIG", "SET", "notify-keyspace-events", "En")
    rd1 = r.deferred()
    assert subscribe(rd1, "PSUBSCRIBE", "*") == [1]
    r("SET", "foo", "bar")
    r("SET", "foo", "baz")          # a second SET of foo is no new key
    r("SET", "bar", "bar")
    assert rd1.read() == ["pmessage", "*", "__keyevent@0__:new", "foo"]
    assert rd1.read() == ["pmessage", "*", "__keyevent@0__:new", "bar"]
    rd1.close()


# -- type/string.tcl, type/incr.tcl ----------------------------------------------------

def test_setrange_against_integer_encoded_key(r):
    r("SET", "mykey", 1234)
    assert r("OBJECT", "ENCODING", "mykey") == "int"
    assert r("SETRANGE", "mykey", 0, "") == 4
    assert r("OBJECT", "ENCODING", "mykey") == "int"
    assert r("GET", "mykey") == "1234"
    r("SET", "mykey", 1234)
    assert r("SETRANGE", "mykey", 1, 3) == 4
    assert r("OBJECT", "ENCODING", "mykey") == "raw"
    assert r("GET", "mykey") == "1334"
    r("SET", "mykey", 1234)
    assert r("SETRANGE", "mykey", 4, 2) == 5
    assert r("OBJECT", "ENCODING", "mykey") == "raw"
    assert r("GET", "mykey") == "12342"


def test_append_modifies_the_encoding_from_int_to_raw(r):
    res = []
    for _ in range(2):
        r("SET", "foo", 1)
        assert r("OBJECT", "ENCODING", "foo") == "int"
        r("APPEND", "foo", 2)
        res.append(r("GET", "foo"))
        assert r("OBJECT", "ENCODING", "foo") == "raw"
    assert res == ["12", "12"]


def test_incr_operation_should_update_encoding_from_raw_to_int(r):
    res = []
    r("SET", "foo", 1)
    assert r("OBJECT", "ENCODING", "foo") == "int"
    r("APPEND", "foo", 2)
    assert r("OBJECT", "ENCODING", "foo") == "raw"
    res.append(r("GET", "foo"))
    r("INCR", "foo")
    assert r("OBJECT", "ENCODING", "foo") == "int"
    res.append(r("GET", "foo"))
    assert res == ["12", "13"]


# -- type/list.tcl, type/zset.tcl ------------------------------------------------------

@pytest.mark.parametrize("command, end", [("BLMPOP", "LEFT"), ("BZMPOP", "MIN")])
def test_mpop_with_illegal_argument(r, command, end):
    arity = f"ERR wrong number of arguments for '{command.lower()}' command"
    assert r.error(command, 1) == arity
    assert r.error(command, 1, 1, "key") == arity
    for numkeys in (0, "a", -1):
        assert r.error(command, 1, numkeys, "key", end).startswith("ERR numkeys")
        assert r.error(command, -1, numkeys, "key", end).startswith("ERR numkeys")
    assert r.error(command, 1, 1, "key", "bad_where") == "ERR syntax error"
    assert r.error(command, 1, 1, "key", end, "bar_arg") == "ERR syntax error"
    for count in (0, -1, "a"):
        assert r.error(command, 1, 1, "key", end, "COUNT", count).startswith("ERR count")
    assert r.error(command, -1, 1, "key", end) == "ERR timeout is negative"
