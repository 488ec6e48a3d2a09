"""DUMP, RESTORE and OBJECT: payloads moving between redis-server 7.0 and Sluice, round
trips, every error path, RESTORE's effects (they load into 7.0), and a fuzz of RESTORE
(random bytes, truncations, bit flips with a recomputed checksum) that must only ever
answer with an error."""
from __future__ import annotations

import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine import Engine, ResponseError
from engine.formats.crc64 import crc64
from engine.formats.dump_payload import encode_string
from engine.formats.rdb_value import dump_value
from tests.differential import (NormalizeContext, RedisOracle, canonical, first_difference,
                                normalize)

READS = (
    ("XINFO", "STREAM", "s", "FULL"),
    ("XINFO", "STREAM", "s"),
    ("XINFO", "GROUPS", "s"),
    ("XRANGE", "s", "-", "+"),
    ("XREVRANGE", "s", "+", "-", "COUNT", "7"),
    ("XLEN", "s"),
    ("XPENDING", "s", "g"),
    ("XPENDING", "s", "g", "-", "+", "1000"),
    ("XPENDING", "s", "g2", "-", "+", "1000"),
    ("XINFO", "CONSUMERS", "s", "g"),
)


def reframe(body: bytes, version: int = 10) -> bytes:
    """A payload of `body` (type byte and value) with its trailer computed."""
    head = body + struct.pack("<H", version)
    return head + struct.pack("<Q", crc64(head))


def same_replies(engine: Engine, oracle: RedisOracle, commands=READS) -> None:
    for cmd in commands:
        ours, theirs = engine.execute(*cmd), oracle.execute(*cmd)
        ctx = NormalizeContext(cmd, False)
        difference = first_difference(normalize(cmd, canonical(ours), ctx),
                                      normalize(cmd, canonical(theirs), ctx), 5000)
        assert difference is None, f"{cmd}: {difference}"


def build_stream(oracle: RedisOracle, entries: int = 400) -> None:
    """A stream with everything a payload carries: several nodes, tombstones, field
    names changing (SAMEFIELDS and not), big values, integers, two groups with PELs,
    consumers with and without pending entries."""
    oracle.execute("XADD", "s", "1-1", "a", "1", "b", "hello")
    for i in range(entries):
        if i % 5 == 0:
            oracle.execute("XADD", "s", "*", "other", str(-i * 1000), "x", "y" * (i * 7))
        else:
            oracle.execute("XADD", "s", "*", "a", str(i), "b", "v" * i)
    ids = [e[0] for e in oracle.execute("XRANGE", "s", "-", "+", "COUNT", "40")]
    oracle.execute("XDEL", "s", "1-1", ids[5], ids[7], ids[30])
    oracle.execute("XGROUP", "CREATE", "s", "g", "0")
    oracle.execute("XREADGROUP", "GROUP", "g", "alice", "COUNT", "25", "STREAMS", "s", ">")
    oracle.execute("XREADGROUP", "GROUP", "g", "bob", "COUNT", "10", "STREAMS", "s", ">")
    oracle.execute("XGROUP", "CREATECONSUMER", "s", "g", "idle-one")
    oracle.execute("XACK", "s", "g", ids[2], ids[3])
    oracle.execute("XCLAIM", "s", "g", "bob", "0", ids[10], ids[11])
    oracle.execute("XGROUP", "CREATE", "s", "g2", "$")
    oracle.execute("XGROUP", "CREATE", "s", "g3", ids[20])


def test_stream_from_redis_restores_equal(engine, oracle):
    build_stream(oracle)
    payload = oracle.execute("DUMP", "s")
    assert payload[0] == 19 and payload[-10:-8] == b"\x0a\x00"      # 7.0: type 19, RDB 10
    assert engine.execute("RESTORE", "s", "0", payload) == b"OK"
    same_replies(engine, oracle)
    # the same nodes: appends and `~` trims go on as in Redis
    writes = [("XADD", "s", f"9999999999999-{i}", "a", "1", "b", "v" * 40) for i in range(150)]
    writes += [("XTRIM", "s", "MAXLEN", "~", "200"), ("XDEL", "s", "9999999999999-3")]
    same_replies(engine, oracle, writes + list(READS))


def test_empty_and_trimmed_streams_from_redis(engine, oracle):
    oracle.execute("XADD", "s", "5-1", "f", "v")
    oracle.execute("XDEL", "s", "5-1")
    oracle.execute("XGROUP", "CREATE", "s", "g", "$")
    engine.execute("RESTORE", "s", "0", oracle.execute("DUMP", "s"))
    same_replies(engine, oracle, READS[:3])
    oracle.execute("DEL", "s")
    engine.execute("DEL", "s")
    for i in range(1, 300):
        oracle.execute("XADD", "s", f"{i}-0", "f", str(i))
    oracle.execute("XTRIM", "s", "MAXLEN", "50")
    engine.execute("RESTORE", "s", "0", oracle.execute("DUMP", "s"))
    same_replies(engine, oracle, READS[:6])


def test_our_stream_round_trips(engine, oracle):
    build_stream(oracle)
    engine.execute("RESTORE", "s", "0", oracle.execute("DUMP", "s"))
    ours = engine.execute("DUMP", "s")
    assert ours[0] == 21 and ours[-10:-8] == b"\x0c\x00"      # type 21, RDB 12
    other = Engine()
    assert other.execute("RESTORE", "s", "0", ours) == b"OK"
    for cmd in READS:
        assert other.execute(*cmd) == engine.execute(*cmd) or cmd[:2] == ("XINFO", "CONSUMERS"), cmd


def test_our_stream_moves_to_redis_7_as_type_19(engine, oracle):
    """7.0 reads RDB 10 at most: dump_value(value, 10) writes the stream as type 19."""
    build_stream(oracle)
    engine.execute("RESTORE", "s", "0", oracle.execute("DUMP", "s"))
    oracle.execute("DEL", "s")
    with pytest.raises(Exception, match="DUMP payload version or checksum are wrong"):
        oracle.execute("RESTORE", "s", "0", engine.execute("DUMP", "s"))
    payload = dump_value(engine.databases[0].peek(b"s"), 10)
    assert oracle.execute("RESTORE", "s", "0", payload) == b"OK"
    same_replies(engine, oracle)


@pytest.mark.parametrize("value", [b"hello", b"12345", b"-7", b"300", b"70000",
                                   b"-2147483648", b"99999999999", b"007", b"",
                                   b"x" * 100, b"ab" * 5000, bytes(range(256))])
def test_strings_both_ways(engine, oracle, value):
    oracle.execute("SET", "k", value)
    engine.execute("RESTORE", "k", "0", oracle.execute("DUMP", "k"))
    assert engine.execute("GET", "k") == value
    ours = engine.execute("DUMP", "k")
    oracle.execute("DEL", "k")
    assert oracle.execute("RESTORE", "k", "0", reframe(ours[:-10])) == b"OK"
    assert oracle.execute("GET", "k") == value
    assert engine.execute("OBJECT", "ENCODING", "k") == oracle.execute("OBJECT", "ENCODING", "k")
    assert engine.execute("OBJECT", "REFCOUNT", "k") == oracle.execute("OBJECT", "REFCOUNT", "k")


def test_dump_of_a_missing_key_is_nil(engine, oracle):
    assert engine.execute("DUMP", "nope") is None
    assert oracle.execute("DUMP", "nope") is None


def errors_of(executor, commands) -> list:
    out = []
    for cmd in commands:
        try:
            out.append(executor.execute(*cmd))
        except Exception as exc:       # both sides' error replies, as text
            out.append(("error", str(exc)))
    return out


def test_error_paths_match_redis(engine, oracle):
    oracle.execute("SET", "str", "v")
    good = oracle.execute("DUMP", "str")
    engine.execute("SET", "str", "v")
    bad_crc = good[:-1] + bytes([good[-1] ^ 1])
    newer = reframe(good[:-10], 99)
    commands = [
        ("RESTORE", "str", "0", good),                          # BUSYKEY
        ("RESTORE", "k", "-1", good),                           # bad TTL
        ("RESTORE", "k", "abc", good),
        ("RESTORE", "k", "0", bad_crc),
        ("RESTORE", "k", "0", newer),
        ("RESTORE", "k", "0", b"short"),
        ("RESTORE", "k", "0", reframe(b"\x63abc")),            # unknown type
        ("RESTORE", "k", "0", reframe(b"\x00\x05ab")),         # string past the end
        ("RESTORE", "k", "0", reframe(b"\x0f\x05")),           # stream cut short
        ("RESTORE", "k", "0", good, "IDLETIME", "-1"),
        ("RESTORE", "k", "0", good, "IDLETIME", "x"),
        ("RESTORE", "k", "0", good, "FREQ", "256"),
        ("RESTORE", "k", "0", good, "FREQ", "-1"),
        ("RESTORE", "k", "0", good, "FREQ", "1", "IDLETIME", "1"),
        ("RESTORE", "k", "0", good, "IDLETIME", "1", "FREQ", "1"),
        ("RESTORE", "k", "0", good, "IDLETIME"),
        ("RESTORE", "k", "0", good, "BOGUS"),
        ("RESTORE", "str", "0", good, "BOGUS"),                 # options before BUSYKEY
        ("RESTORE", "k", "0"),
        ("DUMP",),
        ("DUMP", "a", "b"),
        ("OBJECT", "FREQ", "str"),
        ("OBJECT", "FREQ", "missing"),
        ("OBJECT", "ENCODING", "missing"),
        ("OBJECT", "IDLETIME", "missing"),
        ("OBJECT", "REFCOUNT", "missing"),
        ("OBJECT", "HELP"),
        ("OBJECT", "NOPE", "x"),
        ("OBJECT", "ENCODING"),
        ("OBJECT",),
    ]
    assert errors_of(engine, commands) == errors_of(oracle, commands)


def test_restore_options_and_ttls(engine, oracle):
    oracle.execute("SET", "str", "value")
    good = oracle.execute("DUMP", "str")
    clock = int(oracle.execute("TIME")[0]) * 1000
    commands = [
        ("RESTORE", "a", "100000", good),
        ("RESTORE", "b", str(clock + 500000), good, "ABSTTL"),
        ("RESTORE", "c", "1", good, "ABSTTL"),                  # already expired: nothing
        ("EXISTS", "c"),
        ("SET", "d", "old"),
        ("RESTORE", "d", "0", good, "REPLACE", "IDLETIME", "1000"),
        ("GET", "d"),
        ("OBJECT", "IDLETIME", "d"),
        ("RESTORE", "i1", "0", good, "IDLETIME", "16777215"),  # Redis's 24-bit LRU clock
        ("OBJECT", "IDLETIME", "i1"),
        ("RESTORE", "i2", "0", good, "IDLETIME", "16777216"),
        ("OBJECT", "IDLETIME", "i2"),
        ("SET", "e", "old"),
        ("RESTORE", "e", "1", good, "REPLACE", "ABSTTL"),       # replaced by nothing
        ("EXISTS", "e"),
        ("RESTORE", "f", "0", good, "replace", "absttl", "freq", "5"),
        ("GET", "f"),
        ("RESTORE", "g", "9223372036854775807", good),       # wraps: already expired
        ("EXISTS", "g"),
        ("RESTORE", "h", "9223372036854775807", good, "ABSTTL"),
        ("EXISTS", "h"),
    ]
    ours, theirs = errors_of(engine, commands), errors_of(oracle, commands)
    assert ours == theirs
    for key in ("a", "b"):
        assert abs(engine.execute("PTTL", key) - oracle.execute("PTTL", key)) < 5000


def test_restore_effects_load_into_redis(engine, oracle, second_oracle):
    """RESTORE is logged verbatim with an absolute TTL (as Redis propagates it); the
    log replays on 7.0 for payloads 7.0 reads."""
    build_stream(oracle)
    stream = oracle.execute("DUMP", "s")
    oracle.execute("SET", "str", "v")
    string = oracle.execute("DUMP", "str")
    ctx_effects = []
    for cmd in (("RESTORE", "s", "0", stream), ("RESTORE", "t", "100000", string),
                ("SET", "u", "x"), ("RESTORE", "u", "1", string, "REPLACE", "ABSTTL"),
                ("RESTORE", "v", "0", string, "IDLETIME", "5")):
        ctx_effects.append(effects_of(engine, cmd))
    assert ctx_effects[0] == [[b"RESTORE", b"s", b"0", stream]]
    (restore_t,) = ctx_effects[1]
    assert restore_t[-1] == b"ABSTTL" and int(restore_t[2]) > 100000
    assert ctx_effects[3] == [[b"DEL", b"u"]]
    for argvs in ctx_effects:
        for argv in argvs:
            second_oracle.execute(*argv)
    same_replies(engine, second_oracle)
    assert second_oracle.execute("GET", "t") == b"v"
    assert second_oracle.execute("PTTL", "t") > 90000
    assert second_oracle.execute("EXISTS", "u") == 0


def effects_of(engine: Engine, cmd) -> list:
    """The effects one command reports, through the engine's listener API."""
    seen = []

    def listener(db, effects):
        seen.extend(effects)
    engine.add_effect_listener(listener)
    try:
        engine.execute(*cmd)
    finally:
        engine.remove_effect_listener(listener)
    return [list(argv) for argv in seen]


def test_object_encodings_and_idletime(engine, oracle):
    for key, value in (("i", "123"), ("big", "9" * 20), ("emb", "x" * 44), ("raw", "x" * 45)):
        engine.execute("SET", key, value)
        oracle.execute("SET", key, value)
        assert engine.execute("OBJECT", "ENCODING", key) == oracle.execute("OBJECT", "ENCODING", key)
    engine.execute("XADD", "s", "*", "f", "v")
    assert engine.execute("OBJECT", "ENCODING", "s") == b"stream"
    assert engine.execute("OBJECT", "REFCOUNT", "s") == 1
    assert engine.execute("OBJECT", "IDLETIME", "s") == 0


def test_idletime_follows_the_clock():
    from engine import ManualClock
    clock = ManualClock(1_000_000)
    e = Engine(clock=clock)
    e.execute("SET", "k", "v")
    clock.advance(5000)
    assert e.execute("OBJECT", "IDLETIME", "k") == 5
    e.execute("GET", "k")
    assert e.execute("OBJECT", "IDLETIME", "k") == 0
    e.execute("RESTORE", "r", "0", e.execute("DUMP", "k"), "IDLETIME", "77")
    assert e.execute("OBJECT", "IDLETIME", "r") == 77
    e.execute("XADD", "s", "*", "f", "v")              # streams keep their own time
    clock.advance(3000)
    assert e.execute("OBJECT", "IDLETIME", "s") == 3
    e.execute("XLEN", "s")
    assert e.execute("OBJECT", "IDLETIME", "s") == 0
    e.execute("RESTORE", "t", "0", e.execute("DUMP", "s"), "IDLETIME", "9")
    assert e.execute("OBJECT", "IDLETIME", "t") == 9
    e.execute("RENAME", "t", "u")                       # a lookup, as in Redis
    assert e.execute("OBJECT", "IDLETIME", "u") == 0


# --- fuzz ------------------------------------------------------------------------

def fuzz_payloads() -> list[bytes]:
    e = Engine()
    e.execute("XADD", "s", "1-1", "a", "1", "b", "hello")
    for i in range(30):
        e.execute("XADD", "s", "*", "a", str(i), "b", "v" * i)
    e.execute("XDEL", "s", "1-1")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "5", "STREAMS", "s", ">")
    e.execute("SET", "k", "hello")
    e.execute("RPUSH", "l", "a", "12", "b" * 80)
    e.execute("HSET", "h", "f", "v", "g", "-3")
    e.execute("SADD", "z", "1", "x")
    return [e.execute("DUMP", "s"), e.execute("DUMP", "k"), dump_value(e.databases[0].peek(b"s"), 10),
            *(e.execute("DUMP", key) for key in ("l", "h", "z")),
            *map(bytes.fromhex, REDIS_7_PAYLOADS.values())]


# What redis-server 7.0 dumps for small collections (listpack, intset, quicklist).
REDIS_7_PAYLOADS = {
    "HSET h f v n 12": "1012120000000400816602817602816e020c01ff0a0001369481d35b8974",
    "SADD s 1 7": "0b0c0200000002000000010007000a00a7b08bbd7f6ef6c7",
    "ZADD z 1.5 a 2 b": "111414000000040081610283312e35048162020201ff0a00fa02b425af188763",
    "RPUSH l a 12": "1201020c0c00000002008161020c01ff0a006944b753066ec3e7",
}


SEEDS = fuzz_payloads()


def restore_never_crashes(payload: bytes) -> None:
    e = Engine()
    try:
        assert e.execute("RESTORE", "x", "0", payload) == b"OK"
    except ResponseError as exc:
        assert str(exc) in ("ERR DUMP payload version or checksum are wrong", "ERR Bad data format")
        return
    # what loads is a usable value
    e.execute("TYPE", "x")
    e.execute("DUMP", "x")
    if e.execute("TYPE", "x") == b"stream":
        e.execute("XINFO", "STREAM", "x", "FULL")
        e.execute("XRANGE", "x", "-", "+")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=200))
def test_fuzz_random_bytes(data):
    restore_never_crashes(data)
    restore_never_crashes(reframe(data))


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SEEDS), st.data())
def test_fuzz_truncations_and_bit_flips(seed, data):
    body = bytearray(seed[:-10])
    cut = data.draw(st.integers(0, len(body)))
    restore_never_crashes(reframe(bytes(body[:cut])))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(body) - 1))
        body[i] ^= 1 << data.draw(st.integers(0, 7))
    restore_never_crashes(reframe(bytes(body)))


def as_type_15(payload: bytes) -> bytes:
    """A type-19 stream payload (plain RDB strings, as Sluice writes them) rewritten as
    Redis 5.0-6.x wrote it: type 15, without first ID, max deleted ID, entries added and
    the groups' entries read."""
    from engine.formats.dump_payload import BodyReader, encode_length
    r = BodyReader(payload)
    assert r.byte() == 19
    out = [b"\x0f"]
    nodes = r.length()
    out.append(encode_length(nodes))
    for _ in range(2 * nodes):
        out.append(encode_string(r.string()))
    out += [encode_length(r.length()) for _ in range(3)]       # length, last ID
    for _ in range(5):                                         # first, max deleted, added
        r.length()
    groups = r.length()
    out.append(encode_length(groups))
    for _ in range(groups):
        out.append(encode_string(r.string()))
        out += [encode_length(r.length()) for _ in range(2)]
        r.length()                                             # entries read
        pel = r.length()
        out.append(encode_length(pel))
        for _ in range(pel):
            out += [r._take(24), encode_length(r.length())]
        consumers = r.length()
        out.append(encode_length(consumers))
        for _ in range(consumers):
            out += [encode_string(r.string()), r._take(8)]
            owned = r.length()
            out += [encode_length(owned), r._take(16 * owned)]
    assert r.at_end()
    return reframe(b"".join(out), 9)


def test_type_15_payloads_load_as_in_redis(engine, oracle):
    """RDB 9 / type 15 (Redis 5.0-6.x): both sides derive entries added and the groups'
    entries read the same way."""
    build_stream(oracle, entries=150)
    staging = Engine()
    staging.execute("RESTORE", "s", "0", oracle.execute("DUMP", "s"))
    old = as_type_15(dump_value(staging.databases[0].peek(b"s"), 10))
    oracle.execute("DEL", "s")
    assert oracle.execute("RESTORE", "s", "0", old) == b"OK"
    assert engine.execute("RESTORE", "s", "0", old) == b"OK"
    same_replies(engine, oracle)


def test_big_entries_and_many_nodes(engine, oracle):
    """Values past listpack's 12-bit string length, and LZF-compressed listpacks."""
    for i in range(60):
        oracle.execute("XADD", "s", "*", "f", ("%d-" % i) * (3000 * (i % 4) + 1), "n", str(i))
    oracle.execute("XADD", "s", "*", "huge", b"z" * 300000)
    payload = oracle.execute("DUMP", "s")
    assert b"\xc3" in payload            # redis-server compressed something (LZF)
    engine.execute("RESTORE", "s", "0", payload)
    same_replies(engine, oracle, READS[:6])
    oracle.execute("DEL", "s")
    oracle.execute("RESTORE", "s", "0", dump_value(engine.databases[0].peek(b"s"), 10))
    same_replies(engine, oracle, READS[:6])


# --- collections -----------------------------------------------------------------

COLLECTIONS = {
    "list-small": (("RPUSH", "k", "a", "1", "-300", "b" * 70), ("LRANGE", "k", "0", "-1")),
    "list-big": (("RPUSH", "k", *[str(i) * (i % 9 + 1) for i in range(300)], "x" * 9000),
                 ("LRANGE", "k", "0", "-1")),
    "set-intset": (("SADD", "k", "1", "-5", "70000", "9223372036854775807"), ("SMEMBERS", "k")),
    "set-strings": (("SADD", "k", "a", "b", "12"), ("SMEMBERS", "k")),
    "set-big": (("SADD", "k", *[f"m{i}" for i in range(600)]), ("SMEMBERS", "k")),
    "hash-small": (("HSET", "k", "f", "v", "n", "12", "neg", "-4096"), ("HGETALL", "k")),
    "hash-big": (("HSET", "k", *[x for i in range(200) for x in (f"f{i}", "v" * i)]),
                 ("HGETALL", "k")),
}
UNORDERED = ("SMEMBERS", "HGETALL")


def as_comparable(reply, read):
    if read[0] == "HGETALL":
        return sorted(zip(reply[::2], reply[1::2]))
    return sorted(reply) if read[0] in UNORDERED else reply


@pytest.mark.parametrize("name", sorted(COLLECTIONS))
def test_collections_both_ways(engine, oracle, name):
    write, read = COLLECTIONS[name]
    oracle.execute(*write)
    expected = as_comparable(oracle.execute(*read), read)
    assert engine.execute("RESTORE", "k", "0", oracle.execute("DUMP", "k")) == b"OK"
    assert as_comparable(engine.execute(*read), read) == expected
    if name in ("set-intset", "set-big", "hash-small", "hash-big"):
        # (small lists and sets of strings: listpack since 7.2, quicklist/hashtable in 7.0)
        assert engine.execute("OBJECT", "ENCODING", "k") == oracle.execute("OBJECT", "ENCODING", "k")
    ours = dump_value(engine.databases[0].peek(b"k"), 10)     # for a 7.0 target
    oracle.execute("DEL", "k")
    assert oracle.execute("RESTORE", "k", "0", ours) == b"OK"
    assert as_comparable(oracle.execute(*read), read) == expected


# A small collection's DUMP: Redis's compact type, its listpack or intset copied whole.
COMPACT = {
    "list-small": 18, "set-intset": 11, "set-strings": 20, "hash-small": 16, "zset-small": 17,
    "list-big": 18, "set-big": 2, "hash-big": 4, "zset-big": 5,
}


@pytest.mark.parametrize("name", sorted(COMPACT))
def test_small_collections_dump_their_compact_bytes(engine, oracle, name):
    """The type byte is the one Redis writes for the encoding; where 7.0 has the same
    encoding, the value's bytes are 7.0's own (LZF aside: 7.0 compresses strings of more
    than 20 bytes, we do not); 7.0 restores them as the same encoding, and so do we.
    A listpack set (Redis 7.2+) is a plain SET for a 7.0 target."""
    write, read = (COLLECTIONS[name] if name in COLLECTIONS else
                   (("ZADD", "k", "1", "a", "-2.5", "b", "inf", "12", "300", "c"),
                    ("ZRANGE", "k", "0", "-1", "WITHSCORES")) if name == "zset-small" else
                   (("ZADD", "k", *[x for i in range(200) for x in (str(i / 7), f"m{i}")]),
                    ("ZRANGE", "k", "0", "-1", "WITHSCORES")))
    if name == "list-big":
        write = ("RPUSH", "k", *[str(i) for i in range(40)])   # one node in 7.0 and here
    engine.execute(*write)
    oracle.execute(*write)
    ours = engine.execute("DUMP", "k")
    assert ours[0] == COMPACT[name]
    theirs = oracle.execute("DUMP", "k")
    body = dump_value(engine.databases[0].peek(b"k"), 10)[:-10]
    if name != "set-strings":
        assert body[0] == theirs[0]
        prefix = theirs[3] if theirs[0] == 18 else theirs[1]    # (18: count, container)
        if theirs[0] in (11, 16, 17, 18) and prefix != 0xC3:   # 7.0's string not LZF
            assert body == theirs[:-10]                           # byte for byte
    else:
        assert body[0] == 2
    for side, payload in ((oracle, reframe(body)), (engine, ours)):
        side.execute("DEL", "k")
        assert side.execute("RESTORE", "k", "0", payload) == b"OK"
        assert as_comparable(side.execute(*read), read) == \
            as_comparable(oracle.execute(*read) if side is engine else engine.execute(*read), read)
    assert engine.execute("OBJECT", "ENCODING", "k") == ENCODINGS_HERE[name]
    if name != "set-strings" and not name.startswith("list"):   # 7.0: lists are quicklists
        assert oracle.execute("OBJECT", "ENCODING", "k") == engine.execute("OBJECT", "ENCODING", "k")


ENCODINGS_HERE = {
    "list-small": b"listpack", "set-intset": b"intset", "set-strings": b"listpack",
    "hash-small": b"listpack", "zset-small": b"listpack", "list-big": b"listpack",
    "set-big": b"hashtable", "hash-big": b"hashtable", "zset-big": b"skiplist",
}


def test_sorted_sets_both_ways(engine, oracle):
    for members in (["1.5", "a", "-inf", "b", "3", "c"],
                    [x for i in range(200) for x in (str(i / 7), f"m{i}")]):
        oracle.execute("DEL", "k")
        engine.execute("DEL", "k")
        oracle.execute("ZADD", "k", *members)
        expected = oracle.execute("ZRANGE", "k", "0", "-1", "WITHSCORES")
        engine.execute("RESTORE", "k", "0", oracle.execute("DUMP", "k"))
        assert engine.execute("ZRANGE", "k", "0", "-1", "WITHSCORES") == expected
        ours = engine.execute("DUMP", "k")
        oracle.execute("DEL", "k")
        oracle.execute("RESTORE", "k", "0", reframe(ours[:-10]))
        assert oracle.execute("ZRANGE", "k", "0", "-1", "WITHSCORES") == expected


def ziplist(items: list[bytes]) -> bytes:
    """A ziplist of strings (the encoding Redis < 7.0 wrote), for the reader's tests."""
    entries, prev = b"", 0
    for item in items:
        entry = bytes([prev]) + bytes([len(item)]) + item
        entries += entry
        prev = len(entry)
    body = entries + b"\xff"
    return struct.pack("<IIH", 10 + len(body), 10 + len(entries) - prev, len(items)) + body


@pytest.mark.parametrize("rdbtype,items,read,expected", [
    (10, [b"a", b"bb"], ("LRANGE", "k", "0", "-1"), [b"a", b"bb"]),
    (13, [b"f", b"v"], ("HGETALL", "k"), [b"f", b"v"]),
])
def test_old_ziplist_payloads_load_as_in_redis(engine, oracle, rdbtype, items, read, expected):
    payload = reframe(bytes([rdbtype]) + encode_string(ziplist(items)), 9)
    for side in (engine, oracle):
        assert side.execute("RESTORE", "k", "0", payload) == b"OK"
        assert side.execute(*read) == expected


def test_bad_collection_payloads(engine, oracle):
    commands = [("RESTORE", f"k{i}", "0", reframe(body)) for i, body in enumerate((
        b"\x01\x00",                      # empty list
        b"\x02\x02\x01a\x01a",            # repeated set member
        b"\x0b\x05abcde",                 # intset too short
        b"\x12\x01\x07\x01a",             # quicklist container 7
    ))]
    assert errors_of(engine, commands) == errors_of(oracle, commands)
    # 7.0 accepts a small hash repeating a field unless sanitize-dump-payload is on;
    # Sluice has no way to hold one and refuses it
    with pytest.raises(ResponseError, match="Bad data format"):
        engine.execute("RESTORE", "h", "0", reframe(b"\x04\x02\x01f\x01v\x01f\x01w"))


def test_restore_in_the_aof_loads_in_sluice_and_redis(tmp_path, oracle):
    """RESTORE effects land in the AOF verbatim (absolute TTL): Sluice replays them, and
    so does redis-server 7.0 for payloads it reads (stamped RDB 10)."""
    from servers import RedisServer
    build_stream(oracle)
    oracle.execute("SET", "str", "v")
    payloads = {key: oracle.execute("DUMP", key) for key in ("s", "str")}
    from engine import ManualClock
    start = int(time.time() * 1000)
    e = Engine(clock=ManualClock(start), dir=str(tmp_path), appendonly=True,
               aof_use_rdb_preamble=False, appendfsync="always")
    e.execute("RESTORE", "s", "0", payloads["s"])
    e.execute("RESTORE", "str", "100000", payloads["str"])
    expected = [e.execute(*cmd) for cmd in READS if cmd[1] != "CONSUMERS"]
    e.close(save=False)
    again = Engine(clock=ManualClock(start), dir=str(tmp_path), appendonly=True,
                   aof_use_rdb_preamble=False)
    assert [again.execute(*cmd) for cmd in READS if cmd[1] != "CONSUMERS"] == expected
    assert again.execute("PTTL", "str") == 100000
    try:
        with RedisServer(["--save", "", "--appendonly", "yes"], workdir=tmp_path) as srv:
            conn = RedisOracle("127.0.0.1", srv.port)
            try:
                same_replies(again, conn)
                assert conn.execute("GET", "str") == b"v"
                assert conn.execute("PTTL", "str") > 90000
            finally:
                conn.close()
    finally:
        again.close(save=False)


def test_restore_aborts_watch_and_fires_its_event():
    from engine import EmbeddedRedis
    e = Engine()
    e.execute("SET", "src", "v")
    payload = e.execute("DUMP", "src")
    watcher, other = EmbeddedRedis(engine=e), EmbeddedRedis(engine=e)
    pipe = watcher.pipeline()
    pipe.watch("k")
    other.restore("k", 0, payload)
    pipe.multi()
    pipe.get("k")
    with pytest.raises(Exception, match="Watched variable changed"):
        pipe.execute()
    from engine.commands.dispatch import dispatch     # the context keeps what it saw
    ctx = e.new_context()
    ctx.tracking = True
    dispatch(ctx, [b"RESTORE", b"k2", b"0", payload])
    assert ctx.events == [("g", b"restore", b"k2")] and ctx.touched == [b"k2"]
    # DUMP and OBJECT change nothing
    ctx = e.new_context()
    ctx.tracking = True
    dispatch(ctx, [b"DUMP", b"k2"])
    dispatch(ctx, [b"OBJECT", b"ENCODING", b"k2"])
    assert not ctx.events and not ctx.touched and not ctx.dirty


def test_idletime_after_a_snapshot_load(tmp_path):
    """Keys a snapshot brought back have no access time yet: IDLETIME 0, not the epoch."""
    e = Engine(dir=str(tmp_path))
    e.execute("SET", "k", "v")
    e.execute("XADD", "s", "*", "f", "v")
    e.execute("SAVE")
    e.close(save=False)
    again = Engine(dir=str(tmp_path))
    try:
        assert again.execute("OBJECT", "IDLETIME", "k") == 0
        assert again.execute("OBJECT", "IDLETIME", "s") == 0
    finally:
        again.close(save=False)


def redis_listpack(items: list[bytes]) -> bytes:
    """A listpack as Redis writes it (a 6-byte header), of short strings."""
    entries = b""
    for item in items:
        entry = bytes([0x80 | len(item)]) + item
        entries += entry + bytes([len(entry)])
    body = entries + b"\xff"
    return struct.pack("<IH", 6 + len(body), len(items)) + body


def intset(width: int, values: list[int]) -> bytes:
    return struct.pack("<II", width, len(values)) + b"".join(
        v.to_bytes(width, "little", signed=True) for v in values)


COMPACT_PAYLOADS = {
    "hash": (16, redis_listpack([b"f", b"v", b"12", b"-3", b"g", b""]), ("HGETALL", "k")),
    "hash repeating a field": (16, redis_listpack([b"f", b"v", b"f", b"w"]), None),
    "hash of odd length": (16, redis_listpack([b"f", b"v", b"g"]), None),
    "empty hash": (16, redis_listpack([]), None),
    "zset with ties": (17, redis_listpack([b"a", b"1", b"b", b"1", b"7", b"2.5", b"c", b"inf"]),
                       ("ZRANGE", "k", "0", "-1", "WITHSCORES")),
    "zset repeating a member": (17, redis_listpack([b"a", b"1", b"a", b"2"]), None),
    "zset of odd length": (17, redis_listpack([b"a", b"1", b"b"]), None),
    "intset of 64-bit integers": (11, intset(8, [-2**63, -1, 5, 2**63 - 1]), ("SMEMBERS", "k")),
    "wide intset of small integers": (11, intset(4, [1, 2, 3]), ("SMEMBERS", "k")),
    "intset repeating a member": (11, intset(2, [1, 1, 2]), None),
    "intset not ascending": (11, intset(2, [3, 1, 2]), None),
    "intset of bad width": (11, struct.pack("<II", 3, 1) + b"\x01\x00\x00", None),
    "empty intset": (11, intset(2, []), None),
    "listpack cut short": (16, redis_listpack([b"f", b"v"])[:-2] + b"\xff", None),
    "list": (18, redis_listpack([b"a", b"7", b"", b"a"]), ("LRANGE", "k", "0", "-1")),
    "empty list": (18, redis_listpack([]), None),
}


@pytest.mark.parametrize("name", sorted(COMPACT_PAYLOADS))
def test_compact_payloads_restore_as_in_redis(engine, oracle, name):
    """Listpacks and intsets go straight into ours (engine/formats/rdb_value.pyx
    load_packed): what 7.0 accepts under sanitize-dump-payload yes reads back alike
    and DUMPs again as its compact type; what it refuses gets its error here too."""
    rdbtype, blob, read = COMPACT_PAYLOADS[name]
    oracle.execute("CONFIG", "SET", "sanitize-dump-payload", "yes")
    node = encode_string(blob)
    if rdbtype == 18:                   # a quicklist of one packed node
        node = b"\x01\x02" + node
    command = [("RESTORE", "k", "0", reframe(bytes([rdbtype]) + node))]
    assert errors_of(engine, command) == errors_of(oracle, command)
    if read is not None:
        assert as_comparable(engine.execute(*read), read) == \
            as_comparable(oracle.execute(*read), read)
        if rdbtype != 18:               # (7.0's lists are all quicklists)
            assert engine.execute("OBJECT", "ENCODING", "k") == \
                oracle.execute("OBJECT", "ENCODING", "k")
        assert engine.execute("DUMP", "k")[0] == rdbtype
    else:
        assert engine.execute("EXISTS", "k") == 0
