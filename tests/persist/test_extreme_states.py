"""States at the limits of what commands accept survive every way of saving: SAVE,
BGSAVE, BGREWRITEAOF with a snapshot base and with a RESP base, each followed by kill -9
and a restart of a real sluice-server, and DUMP + RESTORE. Counters at their limits
behave as Redis's do (checked against redis-server)."""
from __future__ import annotations

import pytest

from saved_states import NOT_KEPT, SAVE_PATHS, SavingServer, raw, read_out, save_kill_restart
from servers import ORACLE_FLAGS, RedisServer

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63

WRAPPING_COUNTERS = [
    ("XADD", "s", "1-1", "f", "v"),
    ("XSETID", "s", "1-1", "ENTRIESADDED", INT64_MAX, "MAXDELETEDID", "0-0"),
    ("XGROUP", "CREATE", "s", "g", "0-0", "ENTRIESREAD", INT64_MAX - 1),
    ("XADD", "s", "2-1", "f", "v"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", 5, "STREAMS", "s", ">"),
]


def counters(client) -> tuple:
    info = raw(client, "XINFO", "STREAM", "s")
    group = raw(client, "XINFO", "GROUPS", "s")[0]
    return (info[info.index(b"entries-added") + 1], group[group.index(b"entries-read") + 1],
            group[group.index(b"lag") + 1])


def test_wrapped_counters_are_redis_s(tmp_path):
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        expected = counters(client)
    assert expected[:2] == (INT64_MIN, INT64_MIN)
    with SavingServer("save") as srv:
        client = srv.client()
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        assert counters(client) == expected


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_wrapped_counters_survive_saving(path):
    with SavingServer(path) as srv:
        client = srv.client()
        for command in WRAPPING_COUNTERS:
            raw(client, *command)
        before = read_out(client, NOT_KEPT[path])
        save_kill_restart(srv)
        client = srv.client()
        assert read_out(client, NOT_KEPT[path]) == before
        raw(client, "RESTORE", "copy", 0, raw(client, "DUMP", "s"))
        assert raw(client, "DUMP", "copy") == raw(client, "DUMP", "s")
        assert counters(client)[:2] == (INT64_MIN, INT64_MIN)
