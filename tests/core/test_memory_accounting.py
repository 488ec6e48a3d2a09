"""used_memory is each engine's own, and close to what the process really pays (RSS)."""
import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Engine, ResponseError


def _rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_two_engines_in_one_process_count_their_own_memory():
    gc.collect()    # earlier tests' engines: a free counts to the account current then
    a, b = Engine(), Engine()
    for i in range(2000):
        b.execute("SET", f"k:{i}", "v" * 50)
        b.execute("XADD", "s", "*", "f", i)
    assert a.used_memory() == 0
    assert b.used_memory() > 2000 * 100
    a.execute("XADD", "t", "*", "f", "v")
    before_b = b.used_memory()
    assert 0 < a.used_memory() < 10000
    a.execute("DEL", "t")
    assert a.used_memory() == 0 and b.used_memory() == before_b
    b.execute("FLUSHALL")
    assert b.used_memory() == 0


@pytest.mark.parametrize("command", [("SET", "k:{i}", "v:{i}"),
                                     ("SET", "k:{i}", "v:{i}", "EX", "1000")])
def test_used_memory_follows_rss_growth_of_string_keys(command):
    """200k keys: used_memory within 25% of the RSS growth (the issue's 1M figure is
    in the branch's report; a smaller count keeps the test quick). In a fresh process:
    memory that earlier tests freed would be reused and hide part of the growth."""
    script = f"""
import gc
from engine import Engine
from test_memory_accounting import _rss
e = Engine()
gc.collect()
rss0, used0 = _rss(), e.used_memory()
for i in range(200_000):
    e.execute(*(part.format(i=i) for part in {command!r}))
gc.collect()
print((e.used_memory() - used0) / (_rss() - rss0))
"""
    path = os.pathsep.join([str(Path(__file__).parent)] + sys.path)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": path}, check=True).stdout
    ratio = float(out)
    assert 0.75 <= ratio <= 1.25, ratio


def test_embedded_engine_takes_maxmemory_and_refuses_nothing_itself():
    """Engine.execute runs no client checks: the limit is applied by make_room (which
    process_command calls); an allkeys policy brings used_memory back under it."""
    e = Engine(maxmemory=100_000, maxmemory_policy="allkeys-lru", maxmemory_samples=10,
               maxmemory_eviction_tenacity=100)      # one round evicts all it must
    for i in range(2000):
        e.execute("SET", f"k:{i}", "x" * 50)
    within, fired = e.make_room()
    assert within and fired and e.used_memory() <= 100_000
    assert e.evicted_keys == len(fired) == 2000 - e.execute("DBSIZE")
    with pytest.raises(ValueError):
        Engine(maxmemory_policy="most-recent")


def test_noeviction_make_room_reports_over_the_limit():
    e = Engine(maxmemory=10_000)
    for i in range(200):
        e.execute("SET", f"k:{i}", "x" * 50)
    assert e.make_room() == (False, [])
    e.execute("FLUSHALL")
    assert e.make_room() == (True, [])


def test_object_freq_counts_accesses_under_lfu():
    e = Engine(maxmemory_policy="allkeys-lfu", lfu_log_factor=0)
    e.execute("SET", "a", "1")
    assert e.execute("OBJECT", "FREQ", "a") == 5
    for _ in range(10):
        e.execute("GET", "a")
    assert e.execute("OBJECT", "FREQ", "a") == 15      # log factor 0: every access counts
    with pytest.raises(ResponseError, match="idle time not tracked"):
        e.execute("OBJECT", "IDLETIME", "a")


def test_embedded_clients_get_the_oom_refusal_and_evictions():
    import redis

    from engine import EmbeddedRedis
    r = EmbeddedRedis(engine=Engine(maxmemory=50_000))
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        for i in range(1000):
            r.set(f"k{i}", "x" * 50)
    assert r.get("k1") == b"x" * 50 and r.delete("k1") == 1
    engine = Engine(maxmemory=50_000, maxmemory_policy="allkeys-lru")
    r = EmbeddedRedis(engine=engine)
    for i in range(1000):
        r.set(f"k{i}", "x" * 50)
    size = r.dbsize()           # (DBSIZE itself may evict first: every command does)
    assert engine.evicted_keys == 1000 - size > 0
    assert engine.used_memory() <= 50_000


def test_active_expiry_frees_into_the_engine_that_held_the_stream():
    from engine import ManualClock
    clock = ManualClock(1_000_000)
    a, b = Engine(clock), Engine()
    for i in range(500):
        a.execute("XADD", "s", "*", "f", "v" * 20)
    a.execute("PEXPIRE", "s", 10)
    clock.advance(100)
    b.execute("XADD", "t", "*", "f", "v")       # b's account was current last
    before_b = b.used_memory()
    assert a.active_expire() == [(0, b"s")]
    assert a.used_memory() == 0 and b.used_memory() == before_b
