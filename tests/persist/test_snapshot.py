"""The snapshot file: random states round-trip exactly; damage of any kind (flipped
bits, truncation, records that pass their checksum but are malformed) is refused
with the file and offset, and leaves the engine as it was."""
from __future__ import annotations

import gc
import io
import os
import random

import msgpack
import pytest

from engine import Engine, ManualClock
from engine_states import T0, contents, observe, random_engine
from persist import snapshot
from persist import snapshot_codec as codec
from persist.errors import CorruptFileError, ForeignFileError, TruncatedFileError

DB, STRING, STREAM, ENTRIES, GROUP, PENDING, END = (
    codec.DB, codec.STRING, codec.STREAM, codec.ENTRIES, codec.GROUP, codec.PENDING, codec.END)


def same_clock_engine(source: Engine, **kw) -> Engine:
    return Engine(clock=ManualClock(source.clock.now_ms()), **kw)


def round_trip(source: Engine, path, **kw) -> Engine:
    snapshot.write_snapshot(source, path)
    target = same_clock_engine(source, **kw)
    snapshot.load_snapshot(target, path)
    return target


# -- round trips ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(40))
def test_random_states_round_trip(seed, tmp_path):
    source = random_engine(seed, 500)
    target = round_trip(source, tmp_path / "dump.snap",
                        stream_node_max_entries=random.Random(seed).choice((2, 100)))
    assert observe(target) == observe(source)


def test_random_states_cover_the_hard_cases(tmp_path):
    """The seeds above include each state the issue names explicitly."""
    seen = set()
    for seed in range(40):
        engine = random_engine(seed, 500)
        for (db, key), value in observe(engine).items():
            if value[0] == "string":
                seen.add("string ttl" if value[1] is not None else "string")
                continue
            _, ttl, info, _ = value
            seen.add("stream ttl" if ttl is not None else "stream")
            if info[b"length"] == 0 and info[b"last-generated-id"] != b"0-0":
                seen.add("empty stream with last ID")
            if info[b"max-deleted-entry-id"] != b"0-0":
                seen.add("max deleted ID")
            live = {e[0] for e in info[b"entries"]}
            for g in info[b"groups"]:
                seen.add("entries-read unknown" if g[b"entries-read"] is None else "entries-read")
                if any(p[0] not in live for p in g[b"pending"]):
                    seen.add("pending entry whose entry is gone")
                if any(c[b"pel-count"] == 0 for c in g[b"consumers"]):
                    seen.add("consumer without pending entries")
                if any(c[b"active-time"] == -1 for c in g[b"consumers"]):
                    seen.add("consumer never active")
                if any(p[3] > 1 for p in g[b"pending"]):
                    seen.add("redelivered")
            if db:
                seen.add("database > 0")
    assert seen == {"string", "string ttl", "stream", "stream ttl", "empty stream with last ID",
                    "max deleted ID", "entries-read unknown", "entries-read",
                    "pending entry whose entry is gone", "consumer without pending entries",
                    "consumer never active", "redelivered", "database > 0"}


def big_engine(entries: int = 150_000, pending: int = 40_000, seed: int = 7) -> Engine:
    """One stream spanning many chunks and blocks, plus a PEL spanning several."""
    rng = random.Random(seed)
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    for i in range(entries):
        if rng.random() < 0.3:
            clock.advance(1)
        fields = [b"f", b"%x" % rng.getrandbits(48)]
        if i % 50 == 0:
            fields += [b"extra", os.urandom(rng.randrange(100))]
        engine.execute(b"XADD", b"big", b"*", *fields)
    engine.execute(b"XGROUP", b"CREATE", b"big", b"g", b"0")
    delivered = 0
    while delivered < pending:
        clock.advance(rng.randrange(20))
        delivered += len(engine.execute(b"XREADGROUP", b"GROUP", b"g", b"c%d" % rng.randrange(7),
                                        b"COUNT", 500, b"STREAMS", b"big", b">")[0][1])
    return engine


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    engine = big_engine()
    path = tmp_path_factory.mktemp("big") / "big.snap"
    info = snapshot.write_snapshot(engine, path)
    return engine, path, info


def test_large_stream_and_pel_round_trip(big_file, tmp_path):
    engine, path, info = big_file
    assert snapshot.snapshot_info(path)["blocks"] > 2
    assert (info["entries"], info["pending"]) == (150_000, 40_000)
    # Engines of earlier tests freed by the collector during the load would be debited
    # to the loading engine's account (a free goes to the account current then).
    gc.collect()
    target = same_clock_engine(engine)
    loaded = snapshot.load_snapshot(target, path)
    assert loaded["entries"] == 150_000 and loaded["pending"] == 40_000
    assert observe(target) == observe(engine)
    # The same nodes, but a loaded node's buffer is sized as read where the original's
    # grew by reallocation: the figures agree to a few hundred bytes in 6 MB.
    assert abs(target.used_memory() - engine.used_memory()) <= engine.used_memory() // 1000


def test_loaded_engine_keeps_working_like_the_original(tmp_path):
    source = random_engine(3, 500)
    target = round_trip(source, tmp_path / "dump.snap")
    for engine in (source, target):
        engine.clock.advance(60_000)
        for key in (b"s1", b"s2"):
            engine.execute(b"XADD", key, b"*", b"after", b"load")
            engine.execute(b"XGROUP", b"CREATE", key, b"late", b"0", b"MKSTREAM")
            engine.execute(b"XREADGROUP", b"GROUP", b"late", b"bob", b"COUNT", 10,
                           b"STREAMS", key, b">")
            engine.execute(b"XAUTOCLAIM", key, b"late", b"eve", 0, b"0-0", b"COUNT", 3)
            engine.execute(b"XGROUP", b"DELCONSUMER", key, b"late", b"bob")
    assert observe(target) == observe(source)


def test_load_replaces_everything_and_sessions_see_it(tmp_path):
    source = Engine(clock=ManualClock(T0))
    source.execute(b"SET", b"kept", b"new")
    path = tmp_path / "dump.snap"
    snapshot.write_snapshot(source, path)
    target = Engine(clock=ManualClock(T0))
    session = target.new_context(db=2)
    target.execute(b"SET", b"kept", b"old")
    target.execute(b"XADD", b"gone", b"1-1", b"a", b"b")
    target.execute_in(session, [b"SET", b"gone-too", b"x"])
    snapshot.load_snapshot(target, path)
    assert target.execute(b"GET", b"kept") == b"new"
    assert target.execute(b"EXISTS", b"gone") == 0
    assert target.execute_in(session, [b"DBSIZE"]) == 0
    target.execute_in(session, [b"SET", b"later", b"y"])
    target.select(2)
    assert target.execute(b"GET", b"later") == b"y"


def test_write_is_deterministic_and_atomic(tmp_path):
    engine = random_engine(11, 300)
    path = tmp_path / "dump.snap"
    path.write_bytes(b"previous")
    info = snapshot.write_snapshot(engine, path)
    buf = io.BytesIO()
    snapshot.write_snapshot_file(engine, buf)
    assert path.read_bytes() == buf.getvalue()
    assert info["bytes"] == len(buf.getvalue()) and info["seconds"] >= 0
    assert os.listdir(tmp_path) == ["dump.snap"]

    def interrupt(done, total):
        raise KeyboardInterrupt

    before = path.read_bytes()
    with pytest.raises(KeyboardInterrupt):
        snapshot.write_snapshot(big_engine(20_000, 100), path, progress=interrupt)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["dump.snap"]


def test_progress_reports_bytes(big_file):
    engine, path, info = big_file
    calls = []
    snapshot.load_snapshot(same_clock_engine(engine), path,
                           progress=lambda done, total: calls.append((done, total)))
    size = os.path.getsize(path)
    assert len(calls) == snapshot.snapshot_info(path)["blocks"]
    assert calls[-1] == (size, size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_info_verify_and_records_agree(tmp_path):
    engine = random_engine(5, 500)
    path = tmp_path / "dump.snap"
    written = snapshot.write_snapshot(engine, path)
    info = snapshot.snapshot_info(path)
    verified = snapshot.verify_snapshot(path)
    totals = ("keys", "streams", "entries", "groups", "pending")
    assert [info[k] for k in totals] == [verified[k] for k in totals] == [written[k] for k in totals]
    assert info["format_version"] == snapshot.FORMAT_VERSION == verified["format_version"]
    assert info["file_bytes"] == os.path.getsize(path)
    assert snapshot.is_snapshot(path) and not snapshot.is_snapshot(__file__)
    records = list(snapshot.iter_records(path))
    assert records[-1]["type"] == "end" and records[-1]["keys"] == info["keys"]
    engine.select(0)
    db, key, entries = None, None, {}
    for rec in records:
        if rec["type"] == "db":
            db = rec["index"]
        elif rec["type"] == "stream":
            key = (db, rec["key"])
            entries[key] = []
        elif rec["type"] == "entries":
            entries[key] += rec["entries"]
    for (db, key), got in entries.items():
        engine.select(db)
        assert [[i.encode(), f] for i, f in got] == engine.execute(b"XRANGE", key, b"-", b"+")
    engine.select(0)


# -- damage ------------------------------------------------------------------------------

def loaded_engine() -> tuple[Engine, list]:
    """An engine with data, and its databases' contents: a refused load must not
    replace them."""
    engine = Engine(clock=ManualClock(T0))
    engine.execute(b"SET", b"before", b"load")
    engine.execute(b"XADD", b"s", b"1-1", b"a", b"b")
    return engine, [contents(db) for db in engine.databases]


def assert_refused(engine, dicts, path, error=CorruptFileError) -> Exception:
    with pytest.raises(error) as info:
        snapshot.load_snapshot(engine, path)
    assert [contents(db) for db in engine.databases] == dicts     # a stream by identity
    assert engine.execute(b"GET", b"before") == b"load"
    assert info.value.path == os.fspath(path)
    assert str(path) in str(info.value)
    return info.value


def block_starts(data: bytes) -> list[int]:
    offsets, offset = [], snapshot.HEADER.size
    while offset < len(data):
        offsets.append(offset)
        clen = int.from_bytes(data[offset:offset + 4], "little")
        offset += snapshot.BLOCK.size + clen
    return offsets


def test_every_flipped_byte_of_a_small_file_is_detected(tmp_path):
    data = io.BytesIO()
    snapshot.write_snapshot_file(random_engine(2, 150), data)
    data = data.getvalue()
    assert len(data) > 500
    path = tmp_path / "bad.snap"
    engine, dicts = loaded_engine()
    for pos in range(len(data)):
        damaged = bytearray(data)
        damaged[pos] ^= 1 << (pos % 8)
        path.write_bytes(damaged)
        assert_refused(engine, dicts, path)
        with pytest.raises(CorruptFileError):
            snapshot.verify_snapshot(path)


def test_flipped_bits_in_a_large_file_name_their_block(big_file, tmp_path):
    engine, source, _ = big_file
    data = source.read_bytes()
    starts = block_starts(data)
    assert len(starts) > 2
    path = tmp_path / "bad.snap"
    target, dicts = loaded_engine()
    rng = random.Random(1)
    for pos in [rng.randrange(snapshot.HEADER.size, len(data)) for _ in range(40)]:
        damaged = bytearray(data)
        damaged[pos] ^= 1 << rng.randrange(8)
        path.write_bytes(damaged)
        error = assert_refused(target, dicts, path)
        assert error.offset == max(s for s in starts if s <= pos)
        assert f"offset {error.offset}" in str(error)


def test_truncation_at_every_offset_is_detected(tmp_path):
    data = io.BytesIO()
    snapshot.write_snapshot_file(random_engine(4, 150), data)
    data = data.getvalue()
    path = tmp_path / "cut.snap"
    engine, dicts = loaded_engine()
    for size in range(len(data)):
        path.write_bytes(data[:size])
        assert_refused(engine, dicts, path, TruncatedFileError)


def test_garbage_after_the_end_is_refused(tmp_path):
    data = io.BytesIO()
    snapshot.write_snapshot_file(random_engine(4, 50), data)
    path = tmp_path / "long.snap"
    engine, dicts = loaded_engine()
    for tail in (b"\x00", data.getvalue()[snapshot.HEADER.size:]):
        path.write_bytes(data.getvalue() + tail)
        assert_refused(engine, dicts, path)


def test_not_a_snapshot(tmp_path):
    path = tmp_path / "x"
    engine, dicts = loaded_engine()
    path.write_bytes(b"REDIS0011" + b"\x00" * 100)
    assert f"{path} is a Redis RDB file (RDB version 11), not a Sluice snapshot" in str(
        assert_refused(engine, dicts, path, ForeignFileError))
    path.write_bytes(b"*1\r\n$4\r\nPING\r\n")
    assert "not a Sluice snapshot (bad magic) at offset 0" in str(
        assert_refused(engine, dicts, path))
    path.write_bytes(snapshot.HEADER.pack(snapshot.MAGIC, 99))
    assert "version 99" in str(assert_refused(engine, dicts, path))


# -- malformed records with valid checksums ------------------------------------------------

def varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def chunk_id(prev: tuple, cur: tuple) -> bytes:
    if cur[0] == prev[0]:
        return varint(0) + varint(cur[1] - prev[1] - 1)
    return varint(cur[0] - prev[0]) + varint(cur[1])


def strings(items) -> bytes:
    return b"".join(varint(len(s)) + s for s in items)


def entries_chunk(entries) -> bytes:
    """entries: (ms, seq, [field, value, ...]); every entry names its fields."""
    out, prev = b"", (0, 0)
    for ms, seq, fields in entries:
        out += chunk_id(prev, (ms, seq)) + varint(len(fields) // 2)
        out += strings(fields[::2]) + strings(fields[1::2])
        prev = (ms, seq)
    return out


def zigzag(v: int) -> int:
    return (v << 1) ^ (v >> 63)


def pending_chunk(items) -> bytes:
    """items: (ms, seq, delivery time, delivery count, owner index)."""
    out, prev, prev_time = b"", (0, 0), 0
    for ms, seq, time, count, owner in items:
        out += chunk_id(prev, (ms, seq)) + varint(zigzag(time - prev_time))
        out += varint(zigzag(count)) + varint(owner)
        prev, prev_time = (ms, seq), time
    return out


def valid_records() -> list:
    return [
        [DB, 0],
        [STRING, b"k", b"v", T0 + 5000],
        [STREAM, b"s", None, 2, 5, 0, 1, 0, 0, 0, 2, 1],
        [ENTRIES, 2, entries_chunk([(1, 0, [b"f", b"a"]), (5, 0, [b"f", b"b"])])],
        [GROUP, b"g", 5, 0, 2, [[b"c", T0, T0], [b"idle", T0, -1]], 1],
        [PENDING, 1, pending_chunk([(1, 0, T0, 1, 0)])],
        [END, 2, 1, 2, 1, 1],
    ]


def forge(path, records) -> None:
    with open(path, "wb") as f:
        f.write(snapshot.HEADER.pack(snapshot.MAGIC, snapshot.FORMAT_VERSION))
        snapshot._write_block(f, b"".join(msgpack.packb(r, use_bin_type=True) for r in records))


def test_forged_valid_records_load(tmp_path):
    path = tmp_path / "ok.snap"
    forge(path, valid_records())
    engine = Engine(clock=ManualClock(T0))
    snapshot.load_snapshot(engine, path)
    assert engine.execute(b"XRANGE", b"s", b"-", b"+") == [[b"1-0", [b"f", b"a"]],
                                                           [b"5-0", [b"f", b"b"]]]
    assert engine.execute(b"XPENDING", b"s", b"g") == [1, b"1-0", b"1-0", [[b"c", b"1"]]]
    assert engine.execute(b"PTTL", b"k") == 5000


def replace(index, record):
    def edit(records):
        records[index] = record
    return edit


def replace_field(index, field, value):
    def edit(records):
        records[index][field] = value
    return edit


def fix_end(edit, delta_entries=0, delta_pending=0, delta_keys=0, delta_groups=0):
    """An edit, plus END totals adjusted so that only the edit is wrong."""
    def both(records):
        edit(records)
        end = records[-1]
        end[1] += delta_keys
        end[3] += delta_entries
        end[4] += delta_groups
        end[5] += delta_pending
    return both


MALFORMED = {
    "entry IDs do not increase across chunks": fix_end(lambda r: r.__setitem__(slice(3, 4), [
        [ENTRIES, 1, entries_chunk([(5, 0, [b"f", b"b"])])],
        [ENTRIES, 1, entries_chunk([(1, 0, [b"f", b"a"])])]])),
    "pending owner unknown": replace(5, [PENDING, 1, pending_chunk([(1, 0, T0, 1, 2)])]),
    "pending IDs do not increase": fix_end(lambda r: r.__setitem__(slice(5, 6), [
        [PENDING, 1, pending_chunk([(1, 0, T0, 1, 0)])],
        [PENDING, 1, pending_chunk([(1, 0, T0, 1, 1)])]]), delta_pending=1),
    "key is text": replace_field(2, 1, "s"),
    "string value is an integer": replace_field(1, 2, 7),
    "expiry is text": replace_field(1, 3, "soon"),
    "length is negative": replace_field(2, 3, -2),
    "length is a boolean": replace_field(2, 3, True),
    "stream has fewer entries than announced": replace_field(2, 3, 3),
    "chunk holds fewer entries than its count": replace_field(3, 1, 3),
    "chunk holds more entries than its count": replace_field(3, 1, 1),
    "chunk with trailing bytes": replace(3, [ENTRIES, 2, valid_records()[3][2] + b"\x00"]),
    "entry reuses names first": replace(3, [ENTRIES, 1, chunk_id((0, 0), (1, 0)) + b"\x00\x01a"]),
    "field count beyond the chunk": replace(3, [ENTRIES, 1, chunk_id((0, 0), (1, 0)) + varint(10**9)]),
    "ID beyond 64 bits": replace(3, [ENTRIES, 1, b"\xff" * 10 + b"\x01" + b"\x00\x01\x01f\x01a"]),
    "string beyond the chunk": replace(3, [ENTRIES, 1, chunk_id((0, 0), (1, 0)) + b"\x01\x05f"]),
    "entries after a group": lambda r: r.insert(5, r[3]),
    "group before the entries": lambda r: r.insert(3, r.pop(4)),
    "unknown record type": lambda r: r.insert(1, [99, b"x"]),
    "record is not an array": lambda r: r.insert(1, 5),
    "record is empty": lambda r: r.insert(1, []),
    "end totals differ": replace_field(6, 3, 3),
    "records after the end": lambda r: r.append([DB, 1]),
    "two end records": lambda r: r.append(list(r[-1])),
    "key appears twice": fix_end(lambda r: r.insert(2, r[1]), delta_keys=1),
    "database out of range": replace(0, [DB, 16]),
    "databases out of order": lambda r: r.insert(2, [DB, 0]),
    "key before any database": lambda r: r.pop(0),
    "delivery time beyond INT64_MAX": replace(5, [PENDING, 1, pending_chunk([(1, 0, 1 << 63, 1, 0)])]),
    "negative delivery time": replace(5, [PENDING, 1, pending_chunk([(1, 0, -1, 1, 0)])]),
    "delivery count beyond 48 bits": replace(5, [PENDING, 1, pending_chunk([(1, 0, T0, 1 << 50, 0)])]),
    "more pending entries than announced": replace_field(5, 1, 2),
    "first ID is not the first entry": replace_field(2, 6, 2),
    "entries above the last ID": replace_field(2, 4, 4),
    "entries added below the length": replace_field(2, 10, 1),
    "max deleted ID above the last ID": replace_field(2, 8, 6),
    "consumer appears twice": replace_field(4, 5, [[b"c", T0, T0], [b"c", T0, T0]]),
    "consumer is not a triple": replace_field(4, 5, [[b"c", T0]]),
    "consumers are not an array": replace_field(4, 5, b"c"),
    "group appears twice": fix_end(lambda r: r.insert(6, r[4]), delta_groups=1),
    "fewer groups than announced": replace_field(2, 11, 2),
    "more groups than announced": replace_field(2, 11, 0),
    "stream record too short": lambda r: r[2].pop(),
    "pending outside a group": lambda r: r.insert(4, r.pop(5)),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_records_are_refused(name, tmp_path):
    records = valid_records()
    MALFORMED[name](records)
    path = tmp_path / "forged.snap"
    forge(path, records)
    engine, dicts = loaded_engine()
    error = assert_refused(engine, dicts, path)
    assert "malformed record" in error.reason or "end record" in error.reason
    if name != "database out of range":     # verify does not know the engine's count
        with pytest.raises(CorruptFileError):
            snapshot.verify_snapshot(path)


def test_missing_end_record_is_a_truncation(tmp_path):
    path = tmp_path / "forged.snap"
    forge(path, valid_records()[:-1])
    engine, dicts = loaded_engine()
    error = assert_refused(engine, dicts, path, TruncatedFileError)
    assert error.offset == os.path.getsize(path)


def test_undecodable_msgpack_is_refused(tmp_path):
    path = tmp_path / "forged.snap"
    with open(path, "wb") as f:
        f.write(snapshot.HEADER.pack(snapshot.MAGIC, snapshot.FORMAT_VERSION))
        snapshot._write_block(f, msgpack.packb([DB, 0]) + b"\xc1")
    engine, dicts = loaded_engine()
    assert_refused(engine, dicts, path)
    with open(path, "wb") as f:
        f.write(snapshot.HEADER.pack(snapshot.MAGIC, snapshot.FORMAT_VERSION))
        snapshot._write_block(f, msgpack.packb([DB, 0])[:-1])
    assert "inside a record" in str(assert_refused(engine, dicts, path))
