"""XADD IDMP / IDMPAUTO, XCFGSET, XIDMPRECORD and XINFO STREAM's IDMP fields (Redis 8.6;
XIDMPRECORD 8.8). redis-server 7.0 (the oracle) has none of them, so these tests follow
the newest Redis: most are ports of the IDMP cases of redis/redis
tests/unit/type/stream.tcl, the rest follow redis.io's xadd, xcfgset, xidmprecord and
xinfo-stream pages (sources in tests/differential.py, [IDMP])."""
from __future__ import annotations

import pytest
import xxhash

from engine import EmbeddedRedis, Engine, ManualClock, ResponseError
from engine.core.idmp import auto_iid

T0 = 1_700_000_000_000
IDMP_FIELDS = [b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
               b"iids-added", b"iids-duplicates"]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def x(clock):
    return Engine(clock=clock).execute


def info(x, key="s", *full) -> dict:
    flat = x("XINFO", "STREAM", key, *full)
    return dict(zip(flat[::2], flat[1::2]))


def error(x, *args) -> str:
    with pytest.raises(ResponseError) as failure:
        x(*args)
    return str(failure.value)


# -- argument errors ---------------------------------------------------------------------

@pytest.mark.parametrize("args, text", [
    (("IDMP", "p1", "*", "f", "v"), "ERR Invalid stream ID specified as stream command argument"),
    (("IDMP", "p1", "iid1", "1-1", "f", "v"),
     "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMP", "p1", "iid1", "5-*", "f", "v"),
     "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMPAUTO", "p1", "1-1", "f", "v"),
     "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"),
    (("IDMP", "p1", "iid1", "IDMP", "p2", "iid2", "*", "f", "v"),
     "ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMPAUTO", "p1", "IDMP", "p2", "iid2", "*", "f", "v"),
     "ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "p1", "iid1", "IDMPAUTO", "p2", "*", "f", "v"),
     "ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMPAUTO", "p1", "IDMPAUTO", "p2", "*", "f", "v"),
     "ERR IDMP/IDMPAUTO specified multiple times"),
    (("IDMP", "", "iid1", "*", "f", "v"), "ERR IDMP requires a non-empty producer ID"),
    (("IDMP", "p1", "", "*", "f", "v"), "ERR IDMP requires a non-empty idempotent ID"),
    (("IDMPAUTO", "", "*", "f", "v"), "ERR IDMPAUTO requires a non-empty producer ID"),
    (("IDMP", "p1", "iid1", "*", "f"), "ERR wrong number of arguments for 'xadd' command"),
])
def test_xadd_idmp_argument_errors(x, args, text):
    assert error(x, "XADD", "s", *args) == text
    assert x("EXISTS", "s") == 0


def test_iids_of_any_shape_are_accepted(x):
    iids = ["1", "A", "-", "+", "*", "^", "$", "#", "@", "?", "\\", "IDMP", "123-456",
            "9999999999999-9999999999999", "hello世界", "héllo", "line1\nline2", "tab\there",
            'quote"test', "with spaces", "long" * 100, "x" * 1000, "special!@#$%^&*()",
            "path/to/file", "key:value", b"\x00\x01\x02\xff", "x" * 65536]
    for iid in iids:
        x("XADD", "s", "IDMP", "p1", iid, "*", "f", "v")
    assert x("XLEN", "s") == len(iids)
    assert info(x)[b"iids-tracked"] == len(iids)


# -- duplicates --------------------------------------------------------------------------

def test_duplicate_replies_the_original_id_and_adds_nothing(x):
    first = x("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "100", "currency", "USD")
    again = x("XADD", "s", "IDMP", "p1", "payment-abc", "*", "amount", "200", "currency", "EUR")
    assert again == first
    assert x("XRANGE", "s", "-", "+") == [[first, [b"amount", b"100", b"currency", b"USD"]]]
    assert [info(x)[k] for k in IDMP_FIELDS] == [100, 100, 1, 1, 1, 1]


def test_different_iids_and_producers_make_entries(x):
    ids = [x("XADD", "s", "IDMP", pid, iid, "*", "f", f"{pid}{iid}")
           for pid in ("p1", "p2", b"\x00\x01", "producer-世界", "a" * 1000)
           for iid in ("req-1", "req-2")]
    assert len(set(ids)) == 10 and x("XLEN", "s") == 10
    assert x("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "dup") == ids[2]
    assert x("XADD", "s", "IDMP", b"\x00\x01", "req-2", "*", "f", "dup") == ids[5]
    assert [info(x)[k] for k in IDMP_FIELDS[2:]] == [5, 10, 10, 2]


def test_duplicate_keeps_options_from_acting(x):
    """A duplicate neither trims (MAXLEN) nor needs the stream to be missing (NOMKSTREAM)."""
    assert x("XADD", "s", "NOMKSTREAM", "IDMP", "p1", "req-1", "*", "f", "v") is None
    assert x("EXISTS", "s") == 0
    first = x("XADD", "s", "IDMP", "p1", "req-1", "MAXLEN", "~", 100, "*", "f", "v1")
    second = x("XADD", "s", "MAXLEN", "~", 100, "IDMP", "p1", "req-2", "*", "f", "v2")
    assert x("XADD", "s", "NOMKSTREAM", "IDMP", "p1", "req-1", "MAXLEN", "=", 0,
             "*", "f", "v3") == first
    assert x("XRANGE", "s", "-", "+") == [[first, [b"f", b"v1"]], [second, [b"f", b"v2"]]]
    assert x("XADD", "s", "IDMP", "p1", "req-1", "MINID", "~", "1000000000-0", "*", "f", "x") \
        == first


def test_iid_of_a_trimmed_entry_still_deduplicates(x):
    first = x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    x("XADD", "s", "MAXLEN", 0, "*", "f", "w")
    assert x("XLEN", "s") == 0
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v") == first


def test_transaction_sees_its_own_iids():
    """MULTI/EXEC as in the tcl's 'pipelined requests': the third XADD is a duplicate."""
    client = EmbeddedRedis(Engine(clock=ManualClock(T0)))
    pipe = client.pipeline(transaction=True)
    for iid, value in (("req-1", "v1"), ("req-2", "v2"), ("req-1", "v3"), ("req-3", "v4")):
        pipe.execute_command("XADD", "s", "IDMP", "p1", iid, "*", "field", value)
    results = pipe.execute()
    assert results[2] == results[0] and len(set(results)) == 3
    assert client.xlen("s") == 3


def test_consumer_groups_see_only_new_entries(x):
    x("XADD", "s", "*", "initial", "value")
    x("XGROUP", "CREATE", "s", "g", "0")
    a = x("XADD", "s", "IDMPAUTO", "p1", "*", "event", "login", "user", "alice")
    x("XADD", "s", "IDMPAUTO", "p1", "*", "event", "logout", "user", "bob")
    assert x("XADD", "s", "IDMPAUTO", "p1", "*", "event", "login", "user", "alice") == a
    reply = x("XREADGROUP", "GROUP", "g", "c", "COUNT", 10, "STREAMS", "s", ">")
    assert len(reply[0][1]) == 3


# -- IDMPAUTO ----------------------------------------------------------------------------

def test_idmpauto_deduplicates_equal_fields_in_any_order(x):
    a = x("XADD", "s", "IDMPAUTO", "p1", "*", "field1", "a", "field2", "b", "field3", "c")
    assert x("XADD", "s", "IDMPAUTO", "p1", "*", "field2", "b", "field3", "c", "field1", "a") == a
    assert x("XADD", "s", "IDMPAUTO", "p1", "*", "field3", "c", "field1", "x", "field2", "b") != a
    assert x("XADD", "s", "IDMPAUTO", "p1", "*", "field1", "b") != \
        x("XADD", "s", "IDMPAUTO", "p1", "*", "field2", "b")          # names matter
    assert x("XADD", "s", "IDMPAUTO", "p2", "*", "field1", "a", "field2", "b", "field3", "c") != a
    for value in ("", b"\x00\x01\x02\xff", "hello世界", "x" * 10000):
        first = x("XADD", "s", "IDMPAUTO", "p3", "*", "data", value)
        assert x("XADD", "s", "IDMPAUTO", "p3", "*", "data", value) == first
    assert x("XLEN", "s") == 9


def test_idmpauto_iid_is_redis_xxh3_digest():
    """Redis 8.6 (src/streamidmp.c): XOR of XXH3-128(field || value) over the pairs, the
    128-bit result stored low 64 bits first, little-endian."""
    pairs = [(b"amount", b"100"), (b"currency", b"USD")]
    expected = 0
    for field, value in pairs:
        digest = xxhash.xxh3_128(field + value).digest()          # canonical: big-endian
        expected ^= int.from_bytes(digest, "big")
    flat = [b for pair in pairs for b in pair]
    assert auto_iid(flat, 0, 2) == expected.to_bytes(16, "little")
    assert auto_iid([b"x", b"y"] + flat[2:] + flat[:2], 2, 2) == expected.to_bytes(16, "little")


# -- forgetting: maxsize per producer, duration per stream --------------------------------

def test_maxsize_evicts_each_producers_oldest(x):
    x("XADD", "s", "IDMP", "p1", "init", "*", "field", "init")
    assert x("XCFGSET", "s", "IDMP-MAXSIZE", 3, "IDMP-DURATION", 60) == b"OK"
    ids = {(p, i): x("XADD", "s", "IDMP", p, f"req-{i}", "*", "f", "v")
           for p in ("p1", "p2") for i in (1, 2, 3)}
    for (p, i), first in ids.items():
        assert x("XADD", "s", "IDMP", p, f"req-{i}", "*", "f", "dup") == first
    x("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v4")          # evicts p1's req-1
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "new") != ids["p1", 1]  # evicts req-2
    assert x("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "dup") == ids["p1", 3]
    assert x("XADD", "s", "IDMP", "p2", "req-1", "*", "f", "dup") == ids["p2", 1]
    assert info(x)[b"pids-tracked"] == 2 and info(x)[b"iids-tracked"] == 6


def test_maxsize_wraparound_keeps_the_last_ones(x):
    x("XADD", "s", "IDMP", "p1", "init", "*", "field", "init")
    x("XCFGSET", "s", "IDMP-MAXSIZE", 8, "IDMP-DURATION", 60)
    ids = [x("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", f"v{i}") for i in range(1, 101)]
    for i in range(93, 101):
        assert x("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", "dup") == ids[i - 1]
    for i in range(1, 93):
        assert x("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", "new") != ids[i - 1]
    assert x("XLEN", "s") == 193


def test_iids_expire_duration_after_their_entry_id(x, clock):
    first = x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v1")
    x("XCFGSET", "s", "IDMP-DURATION", 1)                    # clears: req-1 is new again
    again = x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v1")
    assert again != first
    clock.advance(999)
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v2") == again
    assert info(x)[b"iids-tracked"] == 1
    clock.advance(1)                                         # 1000 ms after the entry's ms
    assert info(x)[b"iids-tracked"] == 0 and info(x)[b"pids-tracked"] == 0
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v3") != again


def test_expiry_counts_from_the_entry_id_not_the_clock(x, clock):
    """With the clock behind the stream's last ID, the entry's ID (last ms + 1 seq) is
    what its iid ages from."""
    x("XADD", "s", T0 + 5000, "f", "v")
    entry = x("XADD", "s", "IDMP", "p1", "r", "*", "f", "v")
    assert entry == b"%d-1" % (T0 + 5000)
    x("XCFGSET", "s", "IDMP-DURATION", 2)
    entry = x("XADD", "s", "IDMP", "p1", "r", "*", "f", "v")
    clock.set(T0 + 6999)
    assert x("XADD", "s", "IDMP", "p1", "r", "*", "f", "v") == entry
    clock.set(T0 + 7000)
    assert x("XADD", "s", "IDMP", "p1", "r", "*", "f", "v") != entry


# -- XCFGSET -----------------------------------------------------------------------------

def test_xcfgset_sets_and_reports(x):
    x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    assert x("XCFGSET", "s", "IDMP-DURATION", 5) == b"OK"
    assert (info(x)[b"idmp-duration"], info(x)[b"idmp-maxsize"]) == (5, 100)
    assert x("XCFGSET", "s", "idmp-maxsize", 5000, "IDMP-DURATION", 86400) == b"OK"
    assert (info(x)[b"idmp-duration"], info(x)[b"idmp-maxsize"]) == (86400, 5000)
    x("XCFGSET", "s", "IDMP-DURATION", 1, "IDMP-MAXSIZE", 1)
    assert (info(x)[b"idmp-duration"], info(x)[b"idmp-maxsize"]) == (1, 1)
    full = info(x, "s", "FULL")
    assert (full[b"idmp-duration"], full[b"idmp-maxsize"]) == (1, 1)


@pytest.mark.parametrize("args, text", [
    ((), "ERR At least one parameter must be specified"),
    (("IDMP-DURATION",), "ERR syntax error"),
    (("IDMP-MAXSIZE",), "ERR syntax error"),
    (("INVALID",), "ERR syntax error"),
    (("INVALID", "1"), "ERR syntax error"),
    (("IDMP-DURATION", "5", "IDMP-MAXSIZE"), "ERR syntax error"),
    (("IDMP-DURATION", "86401"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-DURATION", "0"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-DURATION", "-100"), "ERR IDMP-DURATION must be between 1 and 86400 seconds"),
    (("IDMP-MAXSIZE", "10001"), "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-MAXSIZE", "0"), "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
    (("IDMP-MAXSIZE", "-50"), "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"),
] + [((name, value), "ERR value is not an integer or out of range")
     for name in ("IDMP-DURATION", "IDMP-MAXSIZE")
     for value in ("A", "AAA", "*", "-", "+", "120-5", "3.14", "000000000", name)] + [
    (("IDMP-DURATION", "IDMP-DURATION", "IDMP-DURATION"),
     "ERR value is not an integer or out of range"),
    (("IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"), "ERR value is not an integer or out of range"),
    (("IDMP-MAXSIZE", "INVALID", "IDMP-DURATION"), "ERR value is not an integer or out of range"),
])
def test_xcfgset_errors_change_nothing(x, args, text):
    x("XADD", "s", "*", "f", "v")
    x("XCFGSET", "s", "IDMP-DURATION", 86400, "IDMP-MAXSIZE", 10000)
    x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "v")
    assert error(x, "XCFGSET", "s", *args) == text
    assert [info(x)[k] for k in IDMP_FIELDS[:4]] == [86400, 10000, 1, 1]


def test_xcfgset_key_errors(x):
    assert error(x, "XCFGSET", "s", "IDMP-DURATION", 5) == "ERR no such key"
    x("SET", "str", "v")
    assert error(x, "XCFGSET", "str", "IDMP-DURATION", 5).startswith("WRONGTYPE")
    assert error(x, "XCFGSET") == "ERR wrong number of arguments for 'xcfgset' command"


def test_new_settings_clear_history_same_settings_keep_it(x):
    ids = [x("XADD", "s", "IDMP", p, f"req-{i}", "*", "f", "v")
           for p, i in (("p1", 1), ("p1", 2), ("p2", 3))]
    x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup")
    x("XCFGSET", "s", "IDMP-DURATION", 100, "IDMP-MAXSIZE", 100)      # the defaults: kept
    x("XCFGSET", "s", "IDMP-DURATION", 100)
    assert x("XADD", "s", "IDMP", "p1", "req-2", "*", "f", "dup") == ids[1]
    assert [info(x)[k] for k in IDMP_FIELDS[2:]] == [2, 3, 3, 2]
    x("XCFGSET", "s", "IDMP-DURATION", 60)                              # changed: cleared
    assert [info(x)[k] for k in IDMP_FIELDS[2:]] == [0, 0, 3, 2]
    assert x("XRANGE", "s", "-", "+")[0][0] == ids[0]                   # entries stay
    new = x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "new")
    assert new != ids[0]
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "dup") == new
    assert [info(x)[k] for k in IDMP_FIELDS[2:]] == [1, 1, 4, 3]
    x("XCFGSET", "s", "IDMP-MAXSIZE", 5000)                             # changed: cleared
    assert x("XADD", "s", "IDMP", "p1", "req-1", "*", "f", "again") != new


def test_counters_are_lifetime(x):
    x("XADD", "s", "IDMP", "p1", "init", "*", "field", "init")
    x("XCFGSET", "s", "IDMP-MAXSIZE", 3)
    for i in (1, 1, 2, 2):
        x("XADD", "s", "IDMP", "p1", f"req-{i}", "*", "f", "v")
    assert [info(x)[k] for k in IDMP_FIELDS[3:]] == [2, 3, 2]
    x("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "v")
    x("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v")
    x("XADD", "s", "IDMP", "p1", "req-3", "*", "f", "v")
    x("XADD", "s", "IDMP", "p1", "req-4", "*", "f", "v")
    assert [info(x)[k] for k in IDMP_FIELDS[3:]] == [3, 5, 4]


# -- XINFO STREAM ------------------------------------------------------------------------

def test_xinfo_stream_fields_and_their_order(x):
    x("XADD", "s", "*", "field", "value")
    names = x("XINFO", "STREAM", "s")[::2]
    assert names == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                     b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                     *IDMP_FIELDS, b"groups", b"first-entry", b"last-entry"]
    assert [info(x)[k] for k in IDMP_FIELDS] == [100, 100, 0, 0, 0, 0]
    full = x("XINFO", "STREAM", "s", "FULL")[::2]
    assert full == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                    b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                    *IDMP_FIELDS, b"entries", b"groups"]


def test_configured_defaults_apply_to_streams_until_xcfgset(clock):
    engine = Engine(clock=clock, stream_idmp_duration=300, stream_idmp_maxsize=2)
    x = engine.execute
    x("XADD", "s", "*", "f", "v")
    assert (info(x)[b"idmp-duration"], info(x)[b"idmp-maxsize"]) == (300, 2)
    for i in range(3):
        x("XADD", "s", "IDMP", "p", f"r{i}", "*", "f", "v")
    assert info(x)[b"iids-tracked"] == 2
    engine.stream_idmp_maxsize = 50              # CONFIG SET: streams with state keep theirs
    assert info(x)[b"idmp-maxsize"] == 2


def test_plain_streams_hold_no_idmp_state():
    engine = Engine(clock=ManualClock(T0))
    engine.execute("XADD", "s", "*", "f", "v")
    engine.execute("XINFO", "STREAM", "s")
    assert engine.databases[0].peek(b"s").idmp is None
    engine.execute("XADD", "s", "IDMP", "p", "i", "*", "f", "v")
    assert engine.databases[0].peek(b"s").idmp is not None


# -- XIDMPRECORD ---------------------------------------------------------------------------

def test_xidmprecord(x):
    m1 = x("XADD", "s", "*", "f", "1")
    m2 = x("XADD", "s", "*", "f", "2")
    assert x("XIDMPRECORD", "s", "producer1", "idem1", m1) == b"OK"
    assert x("XIDMPRECORD", "s", "producer1", "idem1", m1) == b"OK"      # same mapping
    assert x("XADD", "s", "IDMP", "producer1", "idem1", "*", "f", "3") == m1
    assert error(x, "XIDMPRECORD", "s", "producer1", "idem1", m2).startswith("ERR ")
    x("XDEL", "s", m2)
    assert error(x, "XIDMPRECORD", "s", "producer1", "idem2", m2).startswith("ERR ")
    assert error(x, "XIDMPRECORD", "s", "producer1", "idem2", "bad") == \
        "ERR Invalid stream ID specified as stream command argument"
    assert error(x, "XIDMPRECORD", "s", "", "idem2", m1) == \
        "ERR IDMP requires a non-empty producer ID"
    assert error(x, "XIDMPRECORD", "s", "p", "", m1) == \
        "ERR IDMP requires a non-empty idempotent ID"
    assert error(x, "XIDMPRECORD", "nokey", "p", "i", m1) == "ERR no such key"
    assert error(x, "XIDMPRECORD", "s", "p", "i") == \
        "ERR wrong number of arguments for 'xidmprecord' command"
    assert [info(x)[k] for k in IDMP_FIELDS[2:]] == [1, 1, 1, 1]


# -- effects -------------------------------------------------------------------------------

def test_effects_replay_the_same_iids_under_other_defaults(clock):
    """XADD IDMP logs XADD + XIDMPRECORD, and XCFGSET with the settings when the stream's
    state is created; replayed later, by an engine with other defaults, the same iids
    are tracked with the same expiry."""
    source = Engine(clock=clock, stream_idmp_duration=10)
    log: list[list[bytes]] = []
    source.add_effect_listener(lambda db, effects: log.extend(list(c) for c in effects))
    x = source.execute
    first = x("XADD", "s", "IDMP", "p1", "r1", "*", "f", "v")
    auto = x("XADD", "s", "IDMPAUTO", "p2", "*", "f", "v", "g", "w")
    x("XADD", "s", "IDMP", "p1", "r1", "*", "f", "dup")
    x("XADD", "s", "IDMP", "p1", "r2", "MAXLEN", "0", "*", "f", "v")
    names = [c[0] for c in log]
    assert names == [b"XADD", b"XCFGSET", b"XIDMPRECORD", b"XADD", b"XIDMPRECORD", b"XADD",
                     b"XIDMPRECORD", b"XTRIM"]
    assert log[1] == [b"XCFGSET", b"s", b"IDMP-DURATION", b"10", b"IDMP-MAXSIZE", b"100"]
    assert log[4][3] == auto_iid([b"f", b"v", b"g", b"w"], 0, 2)
    replay = Engine(clock=ManualClock(T0 + 9999), stream_idmp_duration=1)
    for command in log:
        replay.execute(*command)
    y = replay.execute
    assert y("XADD", "s", "IDMP", "p1", "r1", "*", "f", "v") == first
    assert y("XADD", "s", "IDMPAUTO", "p2", "*", "g", "w", "f", "v") == auto
    assert [info(y)[k] for k in IDMP_FIELDS[:5]] == [10, 100, 2, 3, 3]
    replay.clock.set(T0 + 10000)
    assert info(y)[b"iids-tracked"] == 0

