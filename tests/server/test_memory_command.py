"""MEMORY's replies and errors against redis-server 7.0: the same shapes, field names and
order (MEMORY STATS), the same error texts; the figures themselves are Sluice's."""
import re

import pytest
import redis

from raw_io import raw_socket, read_all
from servers import RedisServer, SluiceServer


@pytest.fixture(scope="module")
def both():
    with RedisServer(["--save", ""]) as theirs, SluiceServer(["--save", ""]) as ours:
        yield redis.Redis(port=theirs.port), redis.Redis(port=ours.port)


def _field_names(port: int) -> list:
    """The names in MEMORY STATS's raw RESP2 reply, in order (nested db.N included): its
    bulk strings with letters (its ratios are bulk strings of digits)."""
    with raw_socket(port) as s:
        s.sendall(b"MEMORY STATS\r\n")
        reply = read_all(s, 0.3)[0]
    return [name for name in re.findall(rb"\$\d+\r\n([^\r]*)\r\n", reply)
            if re.search(rb"[a-z]", name)]


def _run(r: redis.Redis, *args):
    try:
        return r.execute_command(*args)
    except redis.ResponseError as error:
        return ("error", str(error))


ERRORS_AND_NILS = [
    ("MEMORY",), ("MEMORY", "foo"), ("MEMORY", "USAGE"), ("MEMORY", "USAGE", "nokey"),
    ("MEMORY", "USAGE", "k", "SAMPLES"), ("MEMORY", "USAGE", "k", "SAMPLES", "-1"),
    ("MEMORY", "USAGE", "k", "SAMPLES", "x"), ("MEMORY", "USAGE", "nokey", "SAMPLES", "x"),
    ("MEMORY", "USAGE", "k", "bad", "1"), ("MEMORY", "STATS", "x"), ("MEMORY", "DOCTOR", "x"),
    ("MEMORY", "PURGE", "x"), ("MEMORY", "MALLOC-STATS", "x"), ("MEMORY", "HELP", "x"),
    ("MEMORY", "PURGE"), ("MEMORY", "HELP"), ("MEMORY", "USAGE", "nokey", "SAMPLES", "0"),
]


@pytest.mark.parametrize("args", ERRORS_AND_NILS, ids=" ".join)
def test_errors_nils_and_fixed_replies_match_redis(both, args):
    theirs, ours = both
    for r in both:
        r.set("k", "v")
    assert _run(ours, *args) == _run(theirs, *args)


def test_usage_is_an_integer_for_every_type_and_samples_zero_means_all(both):
    theirs, ours = both
    for r in both:
        r.flushall()
        r.set("s", "v" * 100)
        r.rpush("l", *range(100))
        r.hset("h", mapping={f"f{i}": i for i in range(100)})
        r.sadd("set", *range(100))
        r.zadd("z", {f"m{i}": i for i in range(100)})
        r.xadd("x", {"f": "v"})
    for key in ("s", "l", "h", "set", "z", "x"):
        for extra in ((), ("SAMPLES", 0), ("SAMPLES", 3)):
            ours_reply = ours.execute_command("MEMORY", "USAGE", key, *extra)
            assert type(ours_reply) is type(theirs.execute_command("MEMORY", "USAGE", key, *extra))
            assert ours_reply > (100 if key != "x" else 0)
    assert ours.memory_usage("l") > ours.memory_usage("s")


def test_stats_has_redis_fields_in_redis_order(both):
    theirs, ours = both
    for r in both:
        r.flushall()
        r.set("a", 1)
        r.set("b", 2, ex=100)
    names = _field_names(ours.connection_pool.connection_kwargs["port"])
    assert names == _field_names(theirs.connection_pool.connection_kwargs["port"])
    assert b"db.0" in names and b"overhead.hashtable.expires" in names
    stats = ours.memory_stats()
    assert stats["keys.count"] == 2
    assert stats["dataset.bytes"] + stats["overhead.total"] == stats["total.allocated"]
    assert float(stats["fragmentation"]) > 1.0


def test_stats_overhead_is_the_bytes_of_the_keyspace_tables(both):
    """overhead.hashtable.main/expires are the index's C tables: they grow with the keys
    and the TTLs (each entry holds its key), sum to overhead.total (one database) and
    are INFO's used_memory_overhead; an empty database is not listed."""
    _, ours = both
    ours.flushall()
    ours.set("a", 1)
    ours.set("b", 2, ex=100)
    small = ours.memory_stats()["db.0"]
    assert small["overhead.hashtable.main"] >= 2 * 18 and small["overhead.hashtable.expires"] >= 18
    pipe = ours.pipeline(transaction=False)
    for i in range(1000):
        pipe.set(f"key:{i:06d}", i)
        if i % 2:
            pipe.expire(f"key:{i:06d}", 1000)
    pipe.execute()
    stats = ours.memory_stats()
    big = stats["db.0"]
    # each entry holds at least its 10-byte key and a pointer to the next one
    assert big["overhead.hashtable.main"] - small["overhead.hashtable.main"] >= 1000 * 18
    assert big["overhead.hashtable.expires"] - small["overhead.hashtable.expires"] >= 500 * 18
    assert stats["overhead.total"] == big["overhead.hashtable.main"] + \
        big["overhead.hashtable.expires"]
    assert stats["overhead.total"] <= stats["total.allocated"]
    assert ours.info("memory")["used_memory_overhead"] == stats["overhead.total"]
    ours.flushall()
    assert "db.0" not in ours.memory_stats()


def test_doctor_and_malloc_stats_are_bulk_strings(both):
    theirs, ours = both
    for sub in ("DOCTOR", "MALLOC-STATS"):
        assert type(ours.execute_command("MEMORY", sub)) is bytes
        assert type(theirs.execute_command("MEMORY", sub)) is bytes


def test_a_streams_usage_counts_its_entries_and_its_groups(both):
    """A stream's nodes and their index, and its groups' PELs, are in its MEMORY USAGE (it
    read 264 bytes, whatever the stream held): 10,000 entries cost each server 10 to 50
    bytes an entry, and 5,000 pending entries add to it."""
    for r in both:
        r.flushall()
        r.xadd("x", {"f": "v"})
        one = r.memory_usage("x")
        pipe = r.pipeline(transaction=False)
        for _ in range(10000):
            pipe.xadd("x", {"f": "v" * 20})
        pipe.execute()
        full = r.memory_usage("x")
        assert 10 * 10000 < full - one < 50 * 10000
        r.xgroup_create("x", "g", "0")
        r.xreadgroup("g", "c", {"x": ">"}, count=5000)
        assert r.memory_usage("x") > full + 5000 * 10
