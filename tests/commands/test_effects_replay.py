"""Replaying the effects a run reported into a fresh engine reproduces its state:
entries, IDs, entries-added, max-deleted-ID, groups, the PEL with delivery times
and counts, consumers and pel_by_time. The replay runs under a different clock, so
anything the log left relative to "now" would show up as a difference."""
import random

import pytest

from engine import Engine, ManualClock
from engine_states import effect_log, logged_state, mixed_workload, replay

T0 = 1_700_000_000_000


@pytest.mark.parametrize("seed", range(6))
def test_replay_reproduces_state(seed):
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    log = effect_log(engine)
    mixed_workload(engine, clock, random.Random(seed), 1500)
    before = logged_state(engine)
    # Replay "later": the log must not depend on the clock it is replayed under.
    again = replay(log, ManualClock(clock.now_ms() + 3_600_000))
    assert logged_state(again) == before


def test_changes_are_counted_with_or_without_a_listener():
    """engine.dirty (save points, rdb_changes_since_last_save) counts the same changes
    whether or not anyone consumes effects (as Redis counts them, not one per effect:
    XDEL and XTRIM count the entries removed, an XREADGROUP one per stream served and a
    PEL re-read none); without a listener no effect is built."""
    runs = []
    for listening in (True, False):
        clock = ManualClock(T0)
        engine = Engine(clock=clock)
        log = []

        def listener(db, effects):
            log.extend(effects)
        engine.add_effect_listener(listener)
        if not listening:
            engine.remove_effect_listener(listener)
        mixed_workload(engine, clock, random.Random(7), 800)
        runs.append((engine.dirty, len(log)))
    (dirty_listening, logged), (dirty_silent, logged_silent) = runs
    assert dirty_listening > 0 and logged > 0
    assert dirty_silent == dirty_listening
    assert logged_silent == 0


def test_contexts_follow_the_listeners():
    engine = Engine()
    ctx = engine.new_context()
    assert not ctx.logging

    def listener(db, effects):
        pass
    engine.add_effect_listener(listener)
    assert ctx.logging and engine.new_context().logging
    engine.remove_effect_listener(listener)
    assert not ctx.logging
