"""RESTORE fuzzed with mutated payloads against a real sluice-server (appendonly yes,
appendfsync always): valid DUMP payloads of every type, from Sluice and from
redis-server 7.0 (in each encoding they write) and in Redis 6's ziplists, mutated by bit flips, byte inserts and
deletes, changed length fields and spliced runs, with the CRC-64 trailer recomputed so
that each mutant reaches the decoder. Every mutant is either refused with an error or
accepted, and an accepted value then DUMPs and RESTOREs to the same payload, and
survives SAVE, BGREWRITEAOF, kill -9 and a restart unchanged. Afterwards the server
answers PING within a second and its log holds no Python traceback.

Bounded for CI (about a minute); SLUICE_FUZZ_SCALE=10 runs ten times as many mutants.
"""
from __future__ import annotations

import os
import random
import time

import pytest
import redis

from engine.formats.crc64 import crc64
from saved_states import (NOT_KEPT, SavingServer, difference, raw, read_out, restored_alike,
                          save_kill_restart)
from servers import ORACLE_FLAGS, RedisServer

SCALE = max(1, int(os.environ.get("SLUICE_FUZZ_SCALE", "1")))
MUTANTS = 15000 * SCALE           # per sanitize-dump-payload setting
LENGTH_BYTES = (0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xFF)


def build_values(client: redis.Redis) -> None:
    """One key per type and encoding (small ones compact, big ones not)."""
    raw(client, "SET", "int", 12345)
    raw(client, "SET", "neg", -9223372036854775808)
    raw(client, "SET", "short", "hello")
    raw(client, "SET", "long", "abcdefgh" * 40)              # LZF-compressed by Redis
    raw(client, "SET", "empty", "")
    raw(client, "RPUSH", "list", "a", 1, -7, "", "x" * 70)
    raw(client, "RPUSH", "biglist", *range(300))
    raw(client, "HSET", "hash", "f", "v", "n", 5, "", "e")
    raw(client, "HSET", "bighash", *[f"f{i}" for i in range(300) for _ in (0, 1)])
    raw(client, "SADD", "intset", 1, -2, 70000, 2**40)
    raw(client, "SADD", "set", "a", "b", "c", 4)
    raw(client, "SADD", "bigset", *[f"m{i}" for i in range(300)])
    raw(client, "ZADD", "zset", 1.5, "a", "-inf", "b", "inf", "c", 0, "d")
    raw(client, "ZADD", "bigzset", *[x for i in range(300) for x in (i / 3, f"m{i}")])
    # compact shapes RESTORE takes straight into its listpacks and intsets: ties ordered
    # by member, integer members and fields, 64-bit intsets, a listpack of integers
    raw(client, "ZADD", "zset-ties", 1, "b", 1, "a", 1, 10, 2, 7, "-0", "z")
    raw(client, "SADD", "intset64", -2**63, 2**63 - 1, 0)
    raw(client, "SADD", "int-listpack", 1, 2, "x")
    raw(client, "SREM", "int-listpack", "x")
    raw(client, "HSET", "hash-ints", 1, 2, -3, 400000)
    for i in range(1, 40):
        raw(client, "XADD", "stream", f"{i}-{i % 3}", "f", i, *(("g", "v") if i % 2 else ()))
    raw(client, "XDEL", "stream", "5-2", "6-0")
    raw(client, "XGROUP", "CREATE", "stream", "g1", "0", "ENTRIESREAD", 0)
    raw(client, "XGROUP", "CREATE", "stream", "g2", "$")
    raw(client, "XREADGROUP", "GROUP", "g1", "c1", "COUNT", 10, "STREAMS", "stream", ">")
    raw(client, "XREADGROUP", "GROUP", "g1", "c2", "COUNT", 5, "STREAMS", "stream", ">")
    raw(client, "XGROUP", "CREATECONSUMER", "stream", "g2", "idle")
    raw(client, "XACK", "stream", "g1", "3-0")
    raw(client, "XDEL", "stream", "4-1")                     # still pending
    raw(client, "XADD", "empty-stream", "1-1", "f", "v")
    raw(client, "XDEL", "empty-stream", "1-1")


def seed_payloads(tmp_path) -> list:
    """Valid payloads: every value of build_values as redis-server 7.0 dumps it, as
    Sluice dumps it (with an IDMP stream too), and in Redis 6's ziplist encodings."""
    payloads = []
    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as oracle:
        client = oracle.client(protocol=2)
        build_values(client)
        payloads += [raw(client, "DUMP", key) for key in sorted(raw(client, "KEYS", "*"))]
    with SavingServer("save") as srv:
        client = srv.client()
        build_values(client)
        raw(client, "XADD", "idmp", "IDMP", "p", "i1", "*", "f", "v")
        payloads += [raw(client, "DUMP", key) for key in sorted(raw(client, "KEYS", "*"))]
    return payloads + legacy_payloads()


def ziplist(items: list) -> bytes:
    """Redis < 7.0's compact list: strings under 64 bytes, integers 0..12 and 16-bit."""
    entries, prev = b"", 0
    for item in items:
        if isinstance(item, int) and 0 <= item <= 12:
            body = bytes([0xF1 + item])
        elif isinstance(item, int):
            body = b"\xC0" + item.to_bytes(2, "little", signed=True)
        else:
            body = bytes([len(item)]) + item
        entry = bytes([prev]) + body
        entries, prev = entries + entry, len(entry)
    tail = 10 + len(entries) - prev if items else 10
    return ((11 + len(entries)).to_bytes(4, "little") + tail.to_bytes(4, "little")
            + len(items).to_bytes(2, "little") + entries + b"\xFF")


def legacy_payloads() -> list:
    """Payloads in the ziplist encodings of Redis < 7.0 (RDB version 9), which no
    redis-server here writes: a list (10), a quicklist of ziplists (14), a hash (13)
    and a sorted set (12)."""
    def rdb_string(data: bytes) -> bytes:
        return bytes([len(data)]) + data if len(data) < 64 else \
            bytes([0x40 | len(data) >> 8, len(data) & 0xFF]) + data
    version = (9).to_bytes(2, "little")
    list_zl = ziplist([b"a", 7, -300, b"", b"xyz"])
    return [with_crc(b"\x0a" + rdb_string(list_zl) + version),
            with_crc(b"\x0e\x02" + rdb_string(list_zl) + rdb_string(ziplist([b"b", 1]))
                     + version),
            with_crc(b"\x0d" + rdb_string(ziplist([b"f", b"v", b"n", 5])) + version),
            with_crc(b"\x0c" + rdb_string(ziplist([b"m", b"1.5", b"n", 2])) + version)]


def with_crc(body: bytes) -> bytes:
    """body (type, value, version) with its CRC-64 appended."""
    return body + crc64(body).to_bytes(8, "little")


def mutate(rng: random.Random, payload: bytes) -> bytes:
    """One to three changes to the body of a payload (its version kept), CRC redone."""
    body = bytearray(payload[:-10])
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(body)) if body else 0
        kind = rng.randrange(6)
        if kind == 0 and body:
            body[at] ^= 1 << rng.randrange(8)                    # bit flip
        elif kind == 1:
            body[at:at] = bytes([rng.randrange(256)])            # byte insert
        elif kind == 2 and body:
            del body[at:at + rng.randint(1, 4)]                  # bytes deleted
        elif kind == 3 and body:
            body[at] = rng.choice(LENGTH_BYTES)                  # a length field changed
        elif kind == 4 and body:
            body[at] = (body[at] + rng.choice((-1, 1, 64, 128))) & 0xFF
        elif body:
            src = rng.randrange(len(body))                       # a run copied elsewhere
            body[at:at] = body[src:src + rng.randint(1, 24)]
    return with_crc(bytes(body) + payload[-10:-8])


def log_has_traceback(srv: SavingServer) -> bool:
    return "Traceback" in srv.log_text()


@pytest.mark.parametrize("sanitize,path", [("yes", "rewrite-snapshot-base"),
                                           ("no", "rewrite-resp-base")])
def test_mutated_payloads_are_refused_or_saved(sanitize, path, tmp_path):
    payloads = seed_payloads(tmp_path)
    rng = random.Random(f"restore fuzz {sanitize}")
    accepted = refused = 0
    with SavingServer(path, ("--sanitize-dump-payload", sanitize)) as srv:
        client = srv.client()
        for payload in payloads:        # the valid ones restore as they are
            assert raw(client, "RESTORE", "seed", 0, payload, "REPLACE") == b"OK"
            assert raw(client, "DUMP", "seed") is not None
        raw(client, "DEL", "seed")
        for i in range(MUTANTS):
            mutant = mutate(rng, rng.choice(payloads))
            key = f"m{i}"
            try:
                raw(client, "RESTORE", key, 0, mutant)
            except redis.ResponseError as exc:
                assert str(exc).startswith(("Bad data format", "DUMP payload version")), exc
                refused += 1
                continue
            accepted += 1
            assert restored_alike(client, key.encode(), raw(client, "DUMP", key)), mutant
        assert raw(client, "SAVE") == b"OK"
        before = read_out(client, NOT_KEPT[path])
        save_kill_restart(srv)
        client = srv.client()
        after = read_out(client, NOT_KEPT[path])
        assert after == before, difference(before, after)
        started = time.monotonic()
        assert raw(client, "PING") == b"PONG" and time.monotonic() - started < 1.0
        assert not log_has_traceback(srv), srv.log_text()[-3000:]
    print(f"sanitize-dump-payload {sanitize}: {len(payloads)} seeds, {MUTANTS} mutants, "
          f"{accepted} accepted, {refused} refused")
