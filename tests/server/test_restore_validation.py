"""RESTORE accepts nothing that cannot be saved: a stream payload whose entry or pending
entry is 0-0 (no command makes one; the snapshot and the AOF rewrite cannot write one)
is refused with Redis's error for a bad payload, under every sanitize-dump-payload
setting, and the server keeps saving, writing and shutting down cleanly. The directive
itself is offered as Redis offers it."""
from __future__ import annotations

import signal

import pytest
import redis

from engine.formats.crc64 import crc64
from saved_states import NOT_KEPT, SAVE_PATHS, SavingServer, raw, read_out, save_kill_restart
from servers import ORACLE_FLAGS, RedisServer

BAD_DATA = "Bad data format"
ONE = b"\x00" * 15 + b"\x01"
ZERO = b"\x00" * 16


def recrc(payload: bytes) -> bytes:
    """payload with its CRC-64 trailer recomputed (so a change gets past the checksum)."""
    head = payload[:-8]
    return head + crc64(head).to_bytes(8, "little")


def stream_payloads(client: redis.Redis) -> dict:
    """Payloads of a stream whose only entry is 0-1, pending in group g: as dumped, with
    the entry made 0-0, and with the pending entry made 0-0."""
    raw(client, "XADD", "src", "0-1", "f", "v")
    raw(client, "XGROUP", "CREATE", "src", "g", "0")
    raw(client, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "src", ">")
    good = raw(client, "DUMP", "src")
    raw(client, "DEL", "src")
    node = good.index(b"\x10" + ONE) + 1         # the node's master ID, an RDB string
    assert good.count(ONE) == 3                  # node key, group PEL, consumer PEL
    pel = good.replace(ONE, ZERO)
    pel = pel[:node] + ONE + pel[node + 16:]
    return {"good": good,
            "entry 0-0": recrc(good[:node] + ZERO + good[node + 16:]),
            "pending 0-0": recrc(pel)}


@pytest.mark.parametrize("sanitize", ["no", "yes", "clients"])
def test_zero_ids_are_refused_and_saving_goes_on(sanitize):
    with SavingServer("rewrite-snapshot-base", ("--sanitize-dump-payload", sanitize)) as srv:
        client = srv.client()
        payloads = stream_payloads(client)
        for name in ("entry 0-0", "pending 0-0"):
            with pytest.raises(redis.ResponseError, match=BAD_DATA):
                raw(client, "RESTORE", name, 0, payloads[name])
        assert raw(client, "RESTORE", "good", 0, payloads["good"]) == b"OK"
        assert raw(client, "SAVE") == b"OK"
        assert raw(client, "SET", "k", "v") == b"OK"
        before = read_out(client, NOT_KEPT[srv.path])
        save_kill_restart(srv)
        assert read_out(srv.client(), NOT_KEPT[srv.path]) == before
        assert srv.stop(signal.SIGTERM) == 0


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_restored_stream_from_redis_survives_saving(path, tmp_path):
    """A stream as redis-server 7.0 dumps it (with a pending entry whose entry was
    deleted, which stays pending) restores and survives every way of saving."""
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        for i in range(1, 6):
            raw(client, "XADD", "s", f"{i}-1", "f", i)
        raw(client, "XGROUP", "CREATE", "s", "g", "0")
        raw(client, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        raw(client, "XDEL", "s", "2-1")
        payload = raw(client, "DUMP", "s")
    with SavingServer(path) as srv:
        client = srv.client()
        assert raw(client, "RESTORE", "s", 0, payload) == b"OK"
        before = read_out(client, NOT_KEPT[path])
        save_kill_restart(srv)
        assert read_out(srv.client(), NOT_KEPT[path]) == before


def test_sanitize_dump_payload_directive_is_redis_s(tmp_path):
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle, SavingServer("save") as srv:
        theirs, ours = oracle.client(protocol=2), srv.client()
        for client in (theirs, ours):
            assert raw(client, "CONFIG", "GET", "sanitize-dump-payload") == [
                b"sanitize-dump-payload", b"no"]
        for value in ("yes", "clients", "no", "maybe", ""):
            replies = []
            for client in (theirs, ours):
                try:
                    replies.append(raw(client, "CONFIG", "SET", "sanitize-dump-payload", value))
                except redis.ResponseError as exc:
                    replies.append(str(exc))
                replies.append(raw(client, "CONFIG", "GET", "sanitize-dump-payload"))
            assert replies[:2] == replies[2:], value


FUTURE = (1 << 48) + 5          # past the 48 bits a delivery time once had here


def pending_reads(client: redis.Redis) -> list:
    """What the restored pending entry looks like to XPENDING, XINFO and the claims."""
    pending = raw(client, "XPENDING", "p", "g", "-", "+", 10)
    full = raw(client, "XINFO", "STREAM", "p", "FULL")
    group = full[full.index(b"groups") + 1][0]
    claimed = raw(client, "XAUTOCLAIM", "p", "g", "other", 1, "0-0", "JUSTID")
    return [pending, group[group.index(b"pending") + 1], claimed[1]]


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_future_delivery_time_restores_in_full(path, tmp_path):
    """A pending entry delivered after 2^48 ms (a future time, which RESTORE takes as
    it is) is not idle, so no claim takes it, DUMP gives the time back, and every way
    of saving keeps it (a replayed XCLAIM's TIME is not capped at the replay's now)."""
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        raw(client, "XADD", "src", "1-1", "f", "v")
        raw(client, "XGROUP", "CREATE", "src", "g", "0")
        raw(client, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "src", ">")
        good = raw(client, "DUMP", "src")
        one_one = (1).to_bytes(8, "big") * 2
        assert good.count(one_one) == 3          # node key, group PEL, consumer PEL
        at = good.index(one_one, good.index(one_one) + 1) + 16      # the group PEL's time
        payload = recrc(good[:at] + FUTURE.to_bytes(8, "little") + good[at + 8:])
        raw(client, "RESTORE", "p", 0, payload)
        expected = pending_reads(client)
    assert expected[0][0][2] == 0 and expected[1][0][2] == FUTURE and expected[2] == []
    with SavingServer(path) as srv:
        client = srv.client()
        raw(client, "RESTORE", "p", 0, payload)
        assert pending_reads(client) == expected
        read = raw(client, "XREADGROUP", "GROUP", "g", "other", "CLAIM", 1, "STREAMS", "p", ">")
        assert read is None
        raw(client, "RESTORE", "copy", 0, raw(client, "DUMP", "p"))
        assert raw(client, "DUMP", "copy") == raw(client, "DUMP", "p")
        save_kill_restart(srv)
        assert pending_reads(srv.client()) == expected
