"""Idempotent-production state (XADD IDMP, Redis 8.6) across restarts: replayed from the
AOF (XADD + XIDMPRECORD effects, under a later clock and other configured defaults), from
a rewritten AOF (snapshot base and RESP base) and from a snapshot. Tracked iids expire by
their entry's ID, so every path tracks the same iids at the same time."""
from __future__ import annotations

import io
import os

import hiredis
import pytest

from engine import Engine, ManualClock
from engine_states import logged_state
from persist import iter_records
from persist.resp_base import write_resp_base
from persist.snapshot_codec import IDMP, StateLoader, state_records

T0 = 1_700_000_000_000


def idmp_state(engine: Engine, key: bytes = b"s", counters: bool = True) -> tuple:
    """Settings, live iids per producer (oldest first) and, with `counters`, the lifetime
    counters of the stream at `key`, as of the engine's clock."""
    state = engine.databases[0].peek(key).idmp
    now = engine.clock.now_ms()
    live = {pid: [(iid, e) for iid, e in iids.items() if not state.expired(e, now)]
            for pid, iids in state.producers.items()}
    live = {pid: items for pid, items in live.items() if items}
    extra = (state.iids_added, state.iids_duplicates) if counters else ()
    return (state.duration, state.maxsize, live, *extra)


def workload(engine: Engine, clock: ManualClock) -> None:
    """Producers, IDMPAUTO, duplicates, eviction by maxsize, expiry, and iids whose
    entries were trimmed or deleted since."""
    x = engine.execute
    x("XADD", "s", "IDMP", "p1", "first", "*", "f", "v")
    x("XCFGSET", "s", "IDMP-DURATION", 5, "IDMP-MAXSIZE", 3)
    for i in range(8):
        clock.advance(700)
        x("XADD", "s", "IDMP", "p1", f"r{i}", "*", "n", i)
        x("XADD", "s", "IDMP", "p1", f"r{i}", "*", "n", "dup")
        x("XADD", "s", "IDMPAUTO", b"p\x00bin", "*", "n", i % 3)
        if i % 2:
            x("XADD", "s", "IDMP", f"p{i}", "once", "*", "n", i)
    ids = [entry[0] for entry in x("XRANGE", "s", "-", "+")]
    x("XDEL", "s", ids[-2])
    x("XTRIM", "s", "MAXLEN", "=", 6)
    x("XADD", "other", "*", "plain", "stream")


def test_workload_tracks_what_it_should():
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    workload(engine, clock)
    duration, maxsize, live, added, duplicates = idmp_state(engine)
    assert (duration, maxsize, added, duplicates) == (5, 3, 16, 13)
    assert [iid for iid, _ in live[b"p1"]] == [b"r5", b"r6", b"r7"]
    assert sorted(live) == [b"p\x00bin", b"p1", b"p3", b"p5", b"p7"]
    assert engine.databases[0].peek(b"other").idmp is None


@pytest.mark.parametrize("later_ms", [0, 2500, 4000])
def test_aof_replay_tracks_the_same_iids(tmp_path, later_ms):
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path), appendonly=True, stream_idmp_duration=60)
    workload(engine, clock)
    before = logged_state(engine)
    engine.close(save=False)
    clock.advance(later_ms)
    expected = idmp_state(engine, counters=False)
    again = Engine(clock=ManualClock(clock.now_ms()), dir=str(tmp_path), appendonly=True,
                   stream_idmp_duration=1, stream_idmp_maxsize=7)
    assert idmp_state(again, counters=False) == expected
    assert again.databases[0].peek(b"s").idmp.iids_duplicates == 0     # not logged
    assert _without(logged_state(again), IDMP_FIELDS) == _without(before, IDMP_FIELDS)
    again.close(save=False)


IDMP_FIELDS = (b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
               b"iids-added", b"iids-duplicates")


def _without(state: dict, fields: tuple[bytes, ...]) -> dict:
    """logged_state() without some XINFO STREAM fields (those idmp_state() checks, or
    the counters a path does not carry)."""
    out = {}
    for key, (kind, expiry, view, *rest) in state.items():
        if kind == "stream":
            view = {k: v for k, v in view.items() if k not in fields}
        out[key] = (kind, expiry, view, *rest)
    return out


@pytest.mark.parametrize("preamble", [True, False])
def test_rewrite_keeps_the_iids(tmp_path, preamble):
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path), appendonly=True,
                    aof_use_rdb_preamble=preamble)
    workload(engine, clock)
    engine.execute("BGREWRITEAOF")
    clock.advance(100)
    engine.execute("XADD", "s", "IDMP", "p1", "after", "*", "f", "v")
    full = idmp_state(engine)
    engine.close(save=False)
    again = Engine(clock=ManualClock(clock.now_ms()), dir=str(tmp_path), appendonly=True)
    if preamble:        # the snapshot base keeps the counters too
        assert idmp_state(again) == full
    else:               # the RESP base re-records the live iids
        assert idmp_state(again, counters=False) == full[:3]
    ms, seq = dict(full[2][b"p1"])[b"after"]
    assert again.execute("XADD", "s", "IDMP", "p1", "after", "*", "f", "dup") == b"%d-%d" % (ms, seq)
    again.close(save=False)


def test_snapshot_keeps_iids_settings_and_counters(tmp_path):
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path))
    workload(engine, clock)
    assert engine.execute("SAVE") == b"OK"
    before = idmp_state(engine)
    engine.close(save=False)
    again = Engine(clock=ManualClock(clock.now_ms()), dir=str(tmp_path))
    assert idmp_state(again) == before
    assert again.databases[0].peek(b"other").idmp is None
    records = [r for r in iter_records(os.path.join(tmp_path, "dump.sluice"))
               if r["type"] == "idmp"]
    assert len(records) == 1 and records[0]["duration"] == 5 and records[0]["maxsize"] == 3
    assert [iid for iid, _ in records[0]["producers"][b"p1"]][-3:] == [b"r5", b"r6", b"r7"]
    again.close(save=False)


def test_resp_base_replays_iids_of_gone_entries():
    """The RESP base re-adds entries that tracked iids point to but that were trimmed or
    deleted, records the iids, then removes those placeholders again."""
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    workload(engine, clock)
    out = io.BytesIO()
    write_resp_base(engine, out)
    data = out.getvalue()
    assert b"XIDMPRECORD" in data and b"XCFGSET" in data
    reader = hiredis.Reader()
    reader.feed(data)
    replay = Engine(clock=ManualClock(clock.now_ms()))
    while (command := reader.gets()) is not False:
        if command[0] != b"SELECT":
            replay.execute(*command)
    assert idmp_state(replay, counters=False) == idmp_state(engine, counters=False)
    counters = (b"iids-added", b"iids-duplicates")
    assert _without(logged_state(replay, layout=False), counters) == \
        _without(logged_state(engine, layout=False), counters)


def test_loader_refuses_a_misplaced_or_malformed_idmp_record():
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    workload(engine, clock)
    records = list(state_records(engine))
    at = next(i for i, r in enumerate(records) if r[0] == IDMP)

    def load(recs):
        loader = StateLoader(16, 4096, 100)
        for r in recs:
            loader.feed(r)
        return loader

    load(records)
    bad_cases = [
        records[:at] + [records[at], records[at]] + records[at + 1:],          # twice
        records[:at - 1] + [records[at], records[at - 1]] + records[at + 1:],   # before entries
        records[:at] + [records[at][:5]] + records[at + 1:],                    # short
        records[:at] + [records[at][:1] + [0] + records[at][2:]] + records[at + 1:],  # duration 0
    ]
    for case in bad_cases:
        with pytest.raises(Exception, match="IDMP|idmp"):
            load(case)
