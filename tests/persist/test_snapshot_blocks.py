"""persist.snapshot_blocks: each block of a snapshot decodes alone (entries column-wise),
from the state the block index noted, to exactly what a whole-file read gives; damage
is refused with the file and offset."""
from __future__ import annotations

import array
import random
from dataclasses import replace

import pytest

from engine import Engine, ManualClock
from engine_states import T0
from persist import snapshot
from persist.errors import CorruptFileError, TruncatedFileError
from persist.snapshot_blocks import PendingEntries, StreamEntries, block_contents, snapshot_blocks


def many_streams_engine(streams: int = 4000, seed: int = 3) -> Engine:
    """Streams with groups and pending entries in two databases, large enough for
    several blocks, so block boundaries fall inside entries, groups and PELs."""
    rng = random.Random(seed)
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    for i in range(400_000):                     # one long stream with a PEL longer than a block
        engine.execute(b"XADD", b"big", b"*", b"n", b"%d" % i)
    engine.execute(b"XGROUP", b"CREATE", b"big", b"all", b"0")
    for consumer in (b"c1", b"c2"):
        engine.execute(b"XREADGROUP", b"GROUP", b"all", consumer, b"COUNT", 200_000, b"STREAMS", b"big", b">")
    for i in range(streams):
        engine.select(i % 2)
        key = b"s%d" % i
        for _ in range(rng.randrange(1, 40)):
            clock.advance(rng.randrange(3))
            engine.execute(b"XADD", key, b"*", b"v", b"%x" % rng.getrandbits(200), b"n", b"%d" % i)
        if i % 3:
            engine.execute(b"SET", b"k%d" % i, b"x")
        for g in range(i % 3):
            engine.execute(b"XGROUP", b"CREATE", key, b"g%d" % g, b"0")
            engine.execute(b"XREADGROUP", b"GROUP", b"g%d" % g, b"c%d" % rng.randrange(3),
                           b"COUNT", rng.randrange(1, 30), b"STREAMS", key, b">")
    return engine


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("blocks") / "many.snap"
    snapshot.write_snapshot(many_streams_engine(), path)
    return path


def rows_of(run: StreamEntries) -> list:
    """(id, [field, value, ...]) of each entry of a run's column buffers."""
    ms, seq, pair_ends, names, name_ends, values, value_ends = run.columns
    ms, seq = array.array("q", ms), array.array("q", seq)
    pair_ends, name_ends, value_ends = (array.array("i", b) for b in (pair_ends, name_ends, value_ends))
    assert len(ms) == len(seq) == len(pair_ends) - 1 == run.count
    return [(f"{ms[i]}-{seq[i]}",
             [part for j in range(pair_ends[i], pair_ends[i + 1])
              for part in (names[name_ends[j]:name_ends[j + 1]], values[value_ends[j]:value_ends[j + 1]])])
            for i in range(run.count)]


def whole_file(path) -> tuple[list, list]:
    """(db, stream, id, fields) and (db, stream, group, id, time, count, consumer) of every
    entry and pending entry, from the whole-file reader."""
    entries, pending = [], []
    db = 0
    key = group = None
    for rec in snapshot.iter_records(path):
        kind = rec["type"]
        if kind == "db":
            db = rec["index"]
        elif kind == "stream":
            key = rec["key"]
        elif kind == "entries":
            entries += [(db, key, i, fields) for i, fields in rec["entries"]]
        elif kind == "group":
            group = rec["name"]
        elif kind == "pending":
            pending += [(db, key, group, p["id"], p["delivery_time"], p["delivery_count"],
                         p["consumer"]) for p in rec["entries"]]
    return entries, pending


def test_blocks_decoded_one_by_one_match_the_whole_file(saved):
    blocks = snapshot_blocks(saved)
    assert len(blocks) == snapshot.snapshot_info(saved)["blocks"] >= 3
    assert any(b.stream is not None and b.group is None for b in blocks), \
        "a block should start inside a stream's entries"
    assert any(b.group is not None for b in blocks), "a block should start inside a PEL"
    decoded = {}
    for block in reversed(blocks):          # any order: each block stands alone
        decoded[block.offset] = (list(block_contents(block)), list(block_contents(block, pending=True)))
    entries, pending = [], []
    for offset in sorted(decoded):
        runs, pel_runs = decoded[offset]
        assert all(isinstance(run, StreamEntries) for run in runs)
        entries += [(run.db, run.stream, entry_id, fields) for run in runs
                    for entry_id, fields in rows_of(run)]
        assert all(isinstance(run, PendingEntries) for run in pel_runs)
        pending += [(run.db, run.stream, run.group, f"{ms}-{seq}", t, n, c)
                    for run in pel_runs for ms, seq, t, n, c in run.entries]
    assert (entries, pending) == whole_file(saved)
    assert {e[0] for e in entries} == {0, 1} and len({p[2] for p in pending}) == 3


def test_damage_is_refused_with_file_and_offset(saved, tmp_path):
    blocks = snapshot_blocks(saved)
    data = bytearray(saved.read_bytes())
    data[blocks[2].offset + 30] ^= 1
    flipped = tmp_path / "flipped.snap"
    flipped.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match=f"{flipped}: block checksum mismatch at offset "
                                               f"{blocks[2].offset}"):
        snapshot_blocks(flipped)
    with pytest.raises(CorruptFileError, match="block checksum mismatch"):
        list(block_contents(replace(blocks[2], path=str(flipped))))
    cut = tmp_path / "cut.snap"
    cut.write_bytes(saved.read_bytes()[:blocks[-1].offset])
    with pytest.raises(TruncatedFileError, match="file ends before its end record"):
        snapshot_blocks(cut)


def test_only_the_wanted_streams_are_decoded(saved):
    """A filter skips other streams' chunks; a block holds runs of the chosen ones only."""
    blocks = snapshot_blocks(saved)
    runs = [run for block in blocks
            for run in block_contents(block, wanted=lambda db, key: (db, key) == (1, b"s663"))]
    pel_runs = [run for block in blocks for run in
                block_contents(block, pending=True, wanted=lambda db, key: key == b"big")]
    entries, pending = whole_file(saved)
    assert [row for run in runs for row in rows_of(run)] == \
        [(i, f) for db, key, i, f in entries if (db, key) == (1, b"s663")]
    assert sum(len(run.entries) for run in pel_runs) == 400_000 == \
        len([p for p in pending if p[1] == b"big"])
