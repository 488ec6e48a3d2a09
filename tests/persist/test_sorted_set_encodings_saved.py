"""Sorted sets in both encodings (listpack and skiplist, -0 and infinite scores, members
of every length class, a skiplist trimmed back under the listpack limits) through every
way to save and come back (tests/persist/saved_states.py: SAVE, BGSAVE, BGREWRITEAOF with
either base, the AOF alone), each ended by kill -9: after the restart, the same members,
scores (as replied), TTLs and OBJECT ENCODING of each key."""
from __future__ import annotations

import pytest

from raw_io import raw_call as raw
from saved_states import NOT_KEPT, SAVE_PATHS, SavingServer, read_out, save_kill_restart


def fill(client) -> None:
    raw(client, "ZADD", "small", "-0", "zero", "1.5", "a", "-inf", "low", "inf", "high",
        "12345678901", "int")
    raw(client, "ZADD", "big", *[x for i in range(300)
                                 for x in (str((i * 37) % 101 - 50.25), b"m%d" % i)])
    raw(client, "ZADD", "big", "-0", "negzero")
    raw(client, "ZADD", "longmember", "2", "x" * 100)
    raw(client, "ZADD", "trimmed", *[x for i in range(200) for x in (str(i), b"t%d" % i)])
    raw(client, "ZREMRANGEBYRANK", "trimmed", 0, 189)         # a skiplist of 10 members
    raw(client, "ZADD", "ttl", "1", "a", "2", "b")
    raw(client, "PEXPIRE", "ttl", 3_600_000)
    for i in range(30):
        raw(client, "ZINCRBY", "big", "0.1", b"m%d" % i)
        raw(client, "ZPOPMIN", "big")
    raw(client, "ZUNIONSTORE", "union", 2, "small", "trimmed", "WEIGHTS", "-1", "2")


def encodings(client) -> dict:
    return {key: raw(client, "OBJECT", "ENCODING", key) for key in raw(client, "KEYS", "*")}


@pytest.mark.parametrize("path", list(SAVE_PATHS))
def test_sorted_sets_survive_kill_9(path):
    with SavingServer(path) as srv:
        client = srv.client()
        fill(client)
        before, kinds = read_out(client, NOT_KEPT[path]), encodings(client)
        assert kinds[b"small"] == b"listpack" and kinds[b"big"] == b"skiplist"
        client.close()
        save_kill_restart(srv)
        client = srv.client()
        assert read_out(client, NOT_KEPT[path]) == before
        after = encodings(client)
        # a load sizes each set afresh, as Redis's loading does: a skiplist trimmed
        # under the limits comes back a listpack (replaying the commands remakes it)
        assert after == {**kinds, b"trimmed": kinds[b"trimmed"] if path == "aof-replay"
                         else b"listpack"}
        client.close()
