"""INFO rdb_changes_since_last_save (Redis's `dirty`, what save points count) moves by
what each stream command (and each collection removal: HDEL, SREM, ZREM) changed, as
in redis-server: the same sequence runs on sluice-server and on the oracle and each
command's step is compared. The one
deliberate difference (tests/differential.py): a PEL re-read by XREADGROUP is no
change in Redis 7.2+ (7.0 counts one)."""
from __future__ import annotations

import pytest

from redis_units import Conn
from servers import SluiceServer

SEQUENCE = [
    ("XADD", "s", "1-0", "f", "v"),
    ("XADD", "s", "2-0", "f", "v"),
    ("XADD", "s", "MAXLEN", "1", "3-0", "f", "v"),          # trimming is part of the one
    ("XADD", "s", "4-0", "f", "v"),
    ("XADD", "s", "5-0", "f", "v"),
    ("XADD", "s", "6-0", "f", "v"),
    ("XTRIM", "s", "MAXLEN", "2"),                          # one per entry removed
    ("XDEL", "s", "5-0", "6-0", "9-0"),                     # one per entry deleted
    ("XADD", "s", "7-0", "f", "v"),
    ("XADD", "s", "8-0", "f", "v"),
    ("XADD", "s", "9-0", "f", "v"),
    ("XGROUP", "CREATE", "s", "g", "0"),
    ("XGROUP", "CREATECONSUMER", "s", "g", "c"),
    ("XGROUP", "CREATECONSUMER", "s", "g", "c"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),    # new consumer + delivery
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),     # the PEL re-read
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
    ("XACK", "s", "g", "4-0", "7-0", "1-0"),
    ("XDEL", "s", "8-0"),
    ("XCLAIM", "s", "g", "c3", "0", "8-0", "9-0"),
    ("XCLAIM", "s", "g", "c3", "0", "9-0", "JUSTID"),
    ("XAUTOCLAIM", "s", "g", "c4", "0", "0-0"),
    ("XGROUP", "SETID", "s", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">"),
    ("XGROUP", "DELCONSUMER", "s", "g", "c"),
    ("XSETID", "s", "100-0"),
    ("XGROUP", "DESTROY", "s", "g"),
    ("XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM"),
    ("XREAD", "STREAMS", "s", "0"),
    ("XADD", "s", "NOMKSTREAM", "*", "f", "v"),
    ("XTRIM", "s", "MAXLEN", "0"),
]
PEL_REREAD = SEQUENCE.index(("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"))

REMOVALS = [    # one change per item removed; a repeat or a missing item is none
    ("HDEL", "h", "a", "b", "x", "a"),
    ("SREM", "s", "a", "b", "x", "a"),
    ("ZREM", "z", "a", "b", "x", "a"),
    ("HDEL", "h", "c", "d"),                                # the last ones: key deleted
    ("SREM", "s", "c", "d"),
    ("ZREM", "z", "c", "d"),
]
COLLECTIONS = [("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"),
               ("SADD", "s", "a", "b", "c", "d"),
               ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")]


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


def steps(port: int, sequence: list = SEQUENCE) -> list:
    r = Conn(port)
    try:
        r("FLUSHALL")
        out = []
        for cmd in sequence:
            before = int(r.s("rdb_changes_since_last_save"))
            r(*cmd)
            out.append(int(r.s("rdb_changes_since_last_save")) - before)
        return out
    finally:
        r.close()


def test_stream_commands_count_changes_as_redis_does(sluice, redis_server):
    ours, theirs = steps(sluice.port), steps(redis_server[1])
    assert (ours[PEL_REREAD], theirs[PEL_REREAD]) == (0, 1)
    ours[PEL_REREAD] = theirs[PEL_REREAD]
    assert list(zip(SEQUENCE, ours)) == list(zip(SEQUENCE, theirs))
    assert ours[SEQUENCE.index(("XTRIM", "s", "MAXLEN", "2"))] == 2
    assert ours[SEQUENCE.index(("XDEL", "s", "5-0", "6-0", "9-0"))] == 2


def test_collection_removals_count_one_change_per_item_removed(sluice, redis_server):
    sequence = COLLECTIONS + REMOVALS
    ours = steps(sluice.port, sequence)[len(COLLECTIONS):]
    theirs = steps(redis_server[1], sequence)[len(COLLECTIONS):]
    assert list(zip(REMOVALS, ours)) == list(zip(REMOVALS, theirs))
    assert ours == [2, 2, 2, 2, 2, 2]
