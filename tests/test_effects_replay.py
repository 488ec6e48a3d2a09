"""Replaying the effects a run reported into a fresh engine reproduces its state:
entries, IDs, entries-added, max-deleted-ID, groups, the PEL with delivery times
and counts, consumers and pel_by_time. The replay runs under a different clock, so
anything the log left relative to "now" would show up as a difference."""
import random

import pytest

from engine import Engine, ManualClock
from engine_state import state_of, workload

T0 = 1_700_000_000_000


def recorder(engine):
    log = []
    engine.add_effect_listener(lambda db, effects: log.extend((db, e) for e in effects))
    return log


def replay(log, clock):
    fresh = Engine(clock=clock)
    for db, argv in log:
        fresh.select(db)
        fresh.execute(*argv)
    fresh.select(0)
    return fresh


@pytest.mark.parametrize("seed", range(6))
def test_replay_reproduces_state(seed):
    clock = ManualClock(T0)
    engine = Engine(clock=clock)
    log = recorder(engine)
    workload(engine, clock, random.Random(seed), 1500)
    before = state_of(engine)
    # Replay "later": the log must not depend on the clock it is replayed under.
    again = replay(log, ManualClock(clock.now_ms() + 3_600_000))
    assert state_of(again) == before
