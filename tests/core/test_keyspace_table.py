"""The keyspace's C index (engine/core/keyspace.pyx) against a dict model: stores,
removals, TTLs, the active sweep, SCAN's guarantee through growth and shrinking
(rehashing included), fair random picks, and the memory it counts."""
from __future__ import annotations

import gc
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Engine, ManualClock
from engine.core.keyspace import Database

T0 = 1_700_000_000_000
KEYS = [f"k{i}".encode() for i in range(64)] + [b"", b"\x00\xff", b"x" * 300]

ops = st.lists(st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), st.binary(max_size=50)),
    st.tuples(st.just("del"), st.sampled_from(KEYS)),
    st.tuples(st.just("expire"), st.sampled_from(KEYS), st.integers(-5, 200)),
    st.tuples(st.just("persist"), st.sampled_from(KEYS)),
    st.tuples(st.just("append"), st.sampled_from(KEYS), st.binary(max_size=20)),
    st.tuples(st.just("tick"), st.integers(0, 100)),
    st.tuples(st.just("sweep"), st.integers(1, 5)),
), max_size=120)


def _scan_all(db: Database, count: int = 3) -> list[bytes]:
    cursor, seen = 0, []
    while True:
        cursor, batch = db.scan(cursor, count)
        seen.extend(batch)
        if cursor == 0:
            return seen


@settings(max_examples=200, deadline=None)
@given(ops)
def test_keyspace_follows_a_dict_model(steps):
    clock = ManualClock(T0)
    eng = Engine(clock)
    db = eng.databases[0]
    model: dict[bytes, bytes] = {}
    ttl: dict[bytes, int] = {}

    def expire_due(key: bytes) -> None:
        """A command's lookup removes its key if due (the others wait)."""
        if ttl.get(key, T0 * 2) <= clock.now_ms():
            del model[key], ttl[key]

    for op in steps:
        if op[0] == "set":
            eng.execute("SET", op[1], op[2])
            model[op[1]] = op[2]
            ttl.pop(op[1], None)
        elif op[0] == "del":
            eng.execute("DEL", op[1])
            expire_due(op[1])
            model.pop(op[1], None)
            ttl.pop(op[1], None)
        elif op[0] == "expire":
            expire_due(op[1])
            if eng.execute("PEXPIRE", op[1], op[2]) and op[1] in model:
                if op[2] <= 0:
                    del model[op[1]]
                    ttl.pop(op[1], None)
                else:
                    ttl[op[1]] = clock.now_ms() + op[2]
        elif op[0] == "persist":
            expire_due(op[1])
            eng.execute("PERSIST", op[1])
            ttl.pop(op[1], None)
        elif op[0] == "append":
            expire_due(op[1])
            eng.execute("APPEND", op[1], op[2])
            model[op[1]] = model.get(op[1], b"") + op[2]
        elif op[0] == "tick":
            clock.advance(op[1])
        else:
            gone = db.sweep_expired(clock.now_ms(), op[1])
            assert all(ttl.get(k, T0 * 2) <= clock.now_ms() for k in gone)
            for key in gone:
                del model[key], ttl[key]
        # Keys due but not yet removed are still in the table: compare live ones.
        live = {k: v for k, v in model.items() if ttl.get(k, T0 * 2) > clock.now_ms()}
        assert {k: v for k, v, when in db.items()
                if when is None or when > clock.now_ms()} == live
        assert len(db) == len(model) and sorted(db.keys()) == sorted(model)
        assert db.volatile_count() == len(ttl)
        assert all(db.expire_at(k) == ttl.get(k, -1) for k in KEYS)
    assert Counter(_scan_all(db)) == Counter(list(model))    # a scan without changes: once each
    if model:
        assert db.random_key() in model
    else:
        assert db.random_key() is None and db.scan(0, 10) == (0, [])
    if ttl:
        assert db.random_volatile_key() in ttl
    else:
        assert db.random_volatile_key() is None


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(1, 20), st.lists(st.integers(-400, 400), max_size=30),
       st.randoms(use_true_random=False))
def test_scan_returns_every_key_present_throughout_growth_and_shrinking(
        stable_count, count, churn, rnd):
    """Between SCAN calls, batches of keys come and go (a negative number removes that
    many churn keys), so the table grows and shrinks, often mid-rehash: every key
    present for the whole scan comes back, nothing that was never there does."""
    eng = Engine(ManualClock(T0))
    db = eng.databases[0]
    stable = [b"s%d" % i for i in range(stable_count)]
    for key in stable:
        eng.execute("SET", key, "1")
    made, live = 0, []
    cursor, seen = 0, []
    moves = iter(churn)
    while True:
        cursor, batch = db.scan(cursor, count)
        seen.extend(batch)
        if cursor == 0:
            break
        n = next(moves, 0)
        if n > 0:
            for _ in range(n):
                made += 1
                live.append(b"c%d" % made)
                eng.execute("SET", live[-1], "1")
        else:
            for _ in range(min(-n, len(live))):
                eng.execute("DEL", live.pop(rnd.randrange(len(live))))
    assert set(stable) <= set(seen)
    assert set(seen) <= set(stable) | {b"c%d" % i for i in range(1, made + 1)}


def test_random_key_is_fair():
    eng = Engine(ManualClock(T0))
    db = eng.databases[0]
    for i in range(20):
        eng.execute("SET", f"k{i}", "v")
        if i % 2:
            eng.execute("PEXPIRE", f"k{i}", 100_000)
    picks = Counter(db.random_key() for _ in range(20_000))
    assert set(picks) == {f"k{i}".encode() for i in range(20)}
    assert min(picks.values()) > 600 and max(picks.values()) < 1400      # 1000 expected
    volatile = Counter(db.random_volatile_key() for _ in range(10_000))
    assert set(volatile) == {f"k{i}".encode() for i in range(1, 20, 2)}
    assert min(volatile.values()) > 700 and max(volatile.values()) < 1300


def test_sweep_finishes_a_pass_started_mid_table():
    """The sweep goes on where it stopped; a call with room enough still sees the whole
    table (it wraps around once), so nothing due is left behind."""
    clock = ManualClock(T0)
    eng = Engine(clock)
    db = eng.databases[0]
    for i in range(5000):
        eng.execute("SET", f"k{i}", "v", "PX", 10 if i % 3 else 1_000_000)
    clock.advance(20)
    first = db.sweep_expired(clock.now_ms(), 10)
    assert 10 <= len(first) < 5000
    rest = db.sweep_expired(clock.now_ms(), 1 << 20)
    assert len(first) + len(rest) == sum(1 for i in range(5000) if i % 3)
    assert len(db) == db.volatile_count() == sum(1 for i in range(5000) if not i % 3)


def test_memory_counted_per_key_and_given_back():
    gc.collect()    # earlier tests' engines: a free counts to the account current then
    eng = Engine(ManualClock(T0))
    before = eng.used_memory()
    for i in range(10_000):
        eng.execute("SET", f"key:{i}", f"value:{i}", "PX", 100_000)
    per_key = (eng.used_memory() - before) / 10_000
    assert 80 < per_key < 200, per_key          # entry, TTL entry, buckets, value object
    usage = eng.execute("MEMORY", "USAGE", "key:1")
    assert 80 < usage < 200, usage
    eng.execute("FLUSHALL")
    assert eng.used_memory() == before


def test_short_strings_live_in_their_entry_and_change_shape_freely():
    """Strings up to 44 bytes are kept in the key's entry (Redis's embstr); a longer
    one, a collection or a stream is a reference. Each change of shape leaves the
    counts true: all deleted, used_memory is back where it started."""
    gc.collect()
    eng = Engine(ManualClock(T0))
    before = eng.used_memory()
    x = eng.execute
    x("SET", "s", "a" * 40)
    assert x("OBJECT", "ENCODING", "s") == b"embstr"
    # still in its entry; OBJECT ENCODING says raw, as Redis's appended sds
    assert x("APPEND", "s", "bbbb") == 44 and x("OBJECT", "ENCODING", "s") == b"raw"
    assert x("APPEND", "s", "c") == 45 and x("OBJECT", "ENCODING", "s") == b"raw"
    assert x("GET", "s") == b"a" * 40 + b"bbbbc"
    x("SET", "s", "12")
    assert x("INCRBY", "s", "5") == 17 and x("OBJECT", "ENCODING", "s") == b"int"
    x("SADD", "t", "m")
    x("SET", "t", "short")                       # a collection replaced by a short string
    x("XADD", "u", "1-1", "f", "v")
    x("SET", "u", "")                            # a stream too; an empty string
    assert x("GET", "u") == b"" and x("STRLEN", "u") == 0
    x("RPUSH", "s2", "x")
    x("SET", "t", "y" * 100)                     # a short string replaced by a long one
    x("SET", "t", "z")                           # and back
    assert x("MGET", "s", "t", "u") == [b"17", b"z", b""]
    assert 0 < x("MEMORY", "USAGE", "t") < 100
    x("DEL", "s", "t", "u", "s2")
    assert eng.used_memory() == before
