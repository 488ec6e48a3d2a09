"""Small collections packed in their key's entry (engine/core/packed.pyx): one
allocation per small key and no value object kept, the object made again when a
command looks the key up, with its encoding and contents unchanged."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

import pytest

from engine import Engine
from engine.core.hash_value import HashValue

KEYS = 2000
# type -> (the command filling a key, its arguments, OBJECT ENCODING, the read-out)
SHAPES = {
    "list": ("RPUSH", lambda i: [f"element:{j}" for j in range(10)], b"listpack",
             ("LRANGE", 0, -1)),
    "hash": ("HSET", lambda i: [x for j in range(10) for x in (f"field:{j}", f"value:{j}")],
             b"listpack", ("HGETALL",)),
    "set of integers": ("SADD", lambda i: [j * 7 + i for j in range(10)], b"intset",
                        ("SMEMBERS",)),
    "set of strings": ("SADD", lambda i: [f"member:{j}" for j in range(10)], b"listpack",
                       ("SMEMBERS",)),
    "sorted set": ("ZADD", lambda i: [x for j in range(10) for x in (j, f"member:{j}")],
                   b"listpack", ("ZRANGE", 0, -1, "WITHSCORES")),
}


@contextmanager
def in_account(eng: Engine) -> Iterator[None]:
    """Direct lookups in a database counted to its engine, as its commands' are (a
    lookup of a packed key allocates its object)."""
    previous = eng.memory.enter()
    try:
        yield
    finally:
        eng.memory.leave(previous)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_small_collection_costs_its_buffer_and_one_entry(shape):
    """Per key, what used_memory grows by beyond the listpack or intset itself: the
    entry's header, the key, its access time, malloc's rounding and a bucket; with a
    value object kept, the object, a second allocation and a wider slot come on top
    (over 100 bytes). Keys read back after packing as they did before, in their
    encoding, with the same size estimate (nbytes); all deleted, nothing is left."""
    gc.collect()
    command, members, encoding, read = SHAPES[shape]
    eng = Engine()
    db = eng.databases[0]
    before = eng.used_memory()
    first = {}
    for i in range(KEYS):
        key = f"key:{i}"
        eng.execute(command, key, *members(i))
        if i % 500 == 0:
            first[key] = (eng.execute(read[0], key, *read[1:]), db.peek(key.encode()).nbytes)
    per_key = (eng.used_memory() - before) / KEYS
    buffer = db.peek(b"key:7").memory_bytes()
    assert per_key - buffer < 64, (per_key, buffer)
    for key, (reply, nbytes) in first.items():
        assert eng.execute("OBJECT", "ENCODING", key) == encoding
        assert eng.execute(read[0], key, *read[1:]) == reply
        assert db.peek(key.encode()).nbytes == nbytes
    eng.execute("FLUSHALL")
    assert eng.used_memory() == before


def test_a_value_held_outside_its_entry_stays_the_one_commands_change():
    """Packing replaces a key's object only when the entry alone holds it: a value
    someone looked up and holds across many other lookups is still the key's, and sees
    its changes. A peek (to read) leaves a packed entry packed: a copy."""
    eng = Engine()
    db = eng.databases[0]
    for i in range(200):
        eng.execute("HSET", f"h:{i}", "f", i)
    assert db.peek(b"h:150") is not db.peek(b"h:150")
    with in_account(eng):
        held = db.lookup_typed(b"h:3", db.last_now, HashValue)
    for _ in range(3):
        for i in range(200):
            eng.execute("HGET", f"h:{i}", "f")
    eng.execute("HSET", "h:3", "g", "new")
    with in_account(eng):
        assert db.lookup_typed(b"h:3", db.last_now, HashValue) is held
    assert held.to_record() == [b"f", b"3", b"g", b"new"]


def test_packed_keys_keep_their_ttl_access_time_and_memory_usage():
    """A packed key keeps its TTL and idle time; MEMORY USAGE reports what its packed
    entry costs, and the keyspace's table overhead leaves the packed values out."""
    eng = Engine()
    db = eng.databases[0]
    for i in range(500):
        eng.execute("SADD", f"s:{i}", *range(i % 5 + 1))
    eng.execute("PEXPIRE", "s:1", 100_000)
    for i in range(500):
        eng.execute("SCARD", f"s:{i}")                  # unpacked, then packed again
    assert 0 < eng.execute("PTTL", "s:1") <= 100_000
    assert eng.execute("SMEMBERS", "s:1") == [b"0", b"1"]
    usage = eng.execute("MEMORY", "USAGE", "s:4")
    assert 40 <= usage <= 80, usage                      # header, key, access, 5 int16
    assert eng.execute("MEMORY", "STATS")[b"db.0"][b"overhead.hashtable.main"] < 500 * 56
