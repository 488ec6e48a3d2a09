"""The collection value classes (engine/core/value_types.py): their interface, the
encodings Redis would report, records that round-trip (and refuse bad input), and
the snapshot / RESP base carrying them."""
from __future__ import annotations

import io

import pytest

from engine import Engine, ManualClock
from engine.core.hash_value import HashValue
from engine.core.list_value import ListValue
from engine.core.set_value import SetValue
from engine.core.value_types import VALUE_TYPES
from persist import snapshot
from persist import snapshot_codec as codec
from persist.resp_base import write_resp_base


def test_registry_names_every_collection_by_its_type():
    assert VALUE_TYPES[b"list"] is ListValue
    assert VALUE_TYPES[b"hash"] is HashValue
    assert VALUE_TYPES[b"set"] is SetValue
    for name, cls in VALUE_TYPES.items():
        assert cls.TYPE_NAME == name


def test_footprint_is_the_value_objects_real_size():
    """A collection counts its Python object as CPython's small-object allocator pays
    for it (16-byte classes): used_memory follows when the object shrinks or grows."""
    for cls in VALUE_TYPES.values():
        assert cls().footprint() == -(-cls.__basicsize__ // 16) * 16, cls.__name__


def test_list_changes_keep_the_byte_count():
    value = ListValue([b"a", b"bb"])
    value.push([b"x", b"y"], left=True)
    value.push([b"zzz"], left=False)
    assert list(value) == [b"y", b"x", b"a", b"bb", b"zzz"]
    assert value.pop(2, left=False) == [b"zzz", b"bb"]
    value.set(0, b"longer")
    assert value.nbytes == sum(map(len, value))
    assert value.encoding() == b"listpack"
    value.push([b"v" * 100] * 100, left=False)
    assert value.encoding() == b"quicklist"


def test_hash_and_set_encodings_grow_and_never_shrink():
    h = HashValue({b"f": b"v"})
    assert h.encoding() == b"listpack"
    h.set(b"big", b"x" * 65)
    assert h.encoding() == b"hashtable"
    h.delete(b"big")
    assert h.encoding() == b"hashtable" and h.nbytes == 2
    s = SetValue([b"1", b"2", b"-3"])
    assert s.encoding() == b"intset"
    s.add(b"01")                           # not the canonical text of an integer
    assert s.encoding() == b"listpack"
    s.add_all(b"m%d" % i for i in range(200))
    assert s.encoding() == b"hashtable"
    assert SetValue(str(i).encode() for i in range(513)).encoding() == b"hashtable"


@pytest.mark.parametrize("value", [
    ListValue([b"a", b"b", b"a"]),
    HashValue({b"f": b"1", b"g": b""}),
    SetValue([b"1", b"x"]),
])
def test_records_round_trip_and_copies_are_independent(value):
    def content(v):
        return sorted(v.to_record()) if isinstance(v, SetValue) else v.to_record()
    back = type(value).from_record(value.to_record())
    assert content(back) == content(value) and len(back) == len(value)
    copy = value.copy()
    assert content(copy) == content(value)
    assert value.footprint() > 0


@pytest.mark.parametrize("cls,items", [
    (ListValue, []), (ListValue, [b"a", 1]),
    (HashValue, [b"f"]), (HashValue, [b"f", b"1", b"f", b"2"]), (HashValue, []),
    (SetValue, [b"a", b"a"]), (SetValue, ["a"]),
])
def test_bad_records_are_refused(cls, items):
    with pytest.raises(ValueError):
        cls.from_record(items)


def engine_with_collections() -> Engine:
    engine = Engine(clock=ManualClock(1_700_000_000_000))
    db = engine.databases[0]
    db.store(b"l", ListValue([b"a", b"b"]))
    db.store(b"h", HashValue({b"f": b"v"}))
    db.store(b"s", SetValue([b"1", b"2"]))
    db.set_expire(b"h", 1_800_000_000_000)
    engine.execute("SET", "str", "x")
    return engine


def test_snapshot_carries_collections(tmp_path):
    source = engine_with_collections()
    path = tmp_path / "dump.sluice"
    snapshot.write_snapshot(source, path)
    kinds = [r["type"] for r in snapshot.iter_records(path)]
    assert kinds.count("list") == kinds.count("hash") == kinds.count("set") == 1
    target = Engine(clock=ManualClock(1_700_000_000_000))
    snapshot.load_snapshot(target, path)
    db = target.databases[0]
    assert list(db.peek(b"l")) == [b"a", b"b"]
    assert db.peek(b"h").to_record() == [b"f", b"v"] and db.expire_at(b"h") == 1_800_000_000_000
    assert set(db.peek(b"s").members()) == {b"1", b"2"}
    assert target.execute("TYPE", "l") == b"list" and target.execute("TYPE", "s") == b"set"
    assert target.execute("SCAN", 0, "TYPE", "hash") == [b"0", [b"h"]]
    before = target.used_memory()
    target.execute("DEL", "l", "h", "s")
    assert target.used_memory() < before


def test_loader_refuses_bad_value_records():
    loader = codec.StateLoader(16, 4096, 100)
    loader.feed([codec.DB, 0])
    with pytest.raises(codec.RecordError, match="unknown value type"):
        loader.feed([codec.VALUE, b"k", b"nope", [b"a"], None])
    with pytest.raises(codec.RecordError, match="repeats"):
        loader.feed([codec.VALUE, b"k2", b"set", [b"a", b"a"], None])


def test_resp_base_recreates_collections_with_their_ttl():
    out = io.BytesIO()
    write_resp_base(engine_with_collections(), out)
    text = out.getvalue()
    assert b"RPUSH\r\n$1\r\nl\r\n$1\r\na\r\n$1\r\nb" in text
    assert b"HSET\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv" in text
    assert b"PEXPIREAT\r\n$1\r\nh\r\n$13\r\n1800000000000" in text


def test_split_readers_skip_collections(tmp_path):
    """The block index (pipeline's Spark snapshot source) walks past VALUE records."""
    from persist import block_contents, block_index
    engine = engine_with_collections()
    engine.execute("XADD", "stream", "1-1", "f", "v")
    path = tmp_path / "dump.sluice"
    snapshot.write_snapshot(engine, path)
    blocks = block_index(path)
    streams = [item for block in blocks for item in block_contents(block)]
    assert [s.stream for s in streams] == [b"stream"] and streams[0].count == 1


@pytest.mark.parametrize("members", [
    [b"%d" % i for i in range(3000)],                          # intset, then a hash table
    [b"%d" % i for i in range(100)] + [b"m%d" % i for i in range(20)],   # up to listpack
    [b"%d" % i for i in range(50)] + [b"m%d" % i for i in range(300)],   # all three
])
def test_set_matches_a_python_set_through_its_encodings(members):
    """Random adds and removes keep SetValue equal to a Python set in every encoding it
    passes through; random picks come from it."""
    import random
    rng = random.Random(5)
    value, model = SetValue(), set()
    seen = set()
    for _ in range(3000):
        m = rng.choice(members)
        if rng.random() < 0.6:
            assert value.add(m) == (m not in model)
            model.add(m)
        else:
            assert value.remove(m) == (m in model)
            model.discard(m)
        assert len(value) == len(model)
        seen.add(value.encoding())
    assert set(value.members()) == model and len(value.members()) == len(model)
    assert all(m in value for m in model) and b"absent" not in value
    assert value.nbytes == sum(map(len, model))
    assert sorted(value.copy().members()) == sorted(model)
    if model:
        assert value.random_member() in model
        picks = value.random_members(10)
        assert set(picks) <= model and len(set(picks)) == min(10, len(model))
        assert set(value.random_picks(50)) <= model
    assert len(seen) >= 2
