"""INFO commandstats of scripts beside redis-server 7.0's: the commands a script calls count
under their own names (calls, rejected_calls, failed_calls), and EVAL/EVALSHA themselves
too. The same scripts run on both servers; the counters are compared, not the times."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from servers import SluiceServer

WRITE_AND_READ = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])"

# (method, args...) run in order on a flushed server after CONFIG RESETSTAT; an error
# reply is part of the scenario (both servers must give one)
SCENARIOS = {
    "calls": [
        ("eval", WRITE_AND_READ, 1, "k", "v"),
        ("evalsha", WRITE_AND_READ, 1, "k", "w"),
        ("eval", "return redis.call('incr', KEYS[1])", 1, "n"),
        ("eval", "redis.call('ping'); return redis.call('echo', 'x')", 0),
        ("eval_ro", "return redis.call('get', KEYS[1])", 1, "k"),
        ("eval", "redis.call('xadd', KEYS[1], '1-1', 'f', 'v'); "
                 "redis.call('xgroup', 'create', KEYS[1], 'g', '0'); "
                 "return redis.call('xinfo', 'stream', KEYS[1])[2]", 1, "s"),
    ],
    "refused and failed in pcall": [
        ("eval", "redis.call('set', 'str', 'x'); redis.pcall('nosuch'); "
                 "redis.pcall('get'); redis.pcall('incr', 'str'); "
                 "redis.pcall('xinfo', 'stream'); redis.pcall('xinfo', 'nosuch'); "
                 "redis.pcall('multi'); redis.pcall('xgroup', 'create', 'nokey', 'g', '0'); "
                 "return 1", 0),
        ("eval_ro", "redis.pcall('set', KEYS[1], 'x'); return redis.pcall('get', KEYS[1])",
         1, "k"),
        ("eval", "return redis.pcall('xread', 'block', '0', 'streams', 's', '$')", 0),
        ("eval", "return redis.pcall('xreadgroup', 'group', 'g', 'c', 'block', '0', "
                 "'streams', 's', '>')", 0),
    ],
    "scripts that fail": [
        ("eval", "redis.call('set', 'a', '1'); redis.call('incr', 'str'); return 1", 0),
        ("eval", "redis.call('set', 'str', 'x'); return redis.call('incr', 'str')", 0),
        ("eval", "return redis.call('nosuch')", 0),
        ("eval", "return redis.call('get')", 0),
        ("eval", "error('boom')", 0),
        ("eval", "return 1", -1),
        ("eval", "return 1", 3, "a"),
        ("eval", "return 1", "x"),
        ("eval", "return (", 0),
        ("evalsha_missing", "ffffffffffffffffffffffffffffffffffffffff", 0),
        ("eval_ro", "return redis.call('set', KEYS[1], 'x')", 1, "k"),
        ("eval", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')", 1, "k"),
        ("eval_ro", "#!lua\nreturn 1", 0),
        ("eval", "return redis.call('xread', 'block', '0', 'streams', 's', '$')", 0),
    ],
}


def run(r: redis.Redis, steps: list) -> list:
    """Runs the steps; the replies (errors as their text)."""
    out = []
    for method, body, *rest in steps:
        if method == "evalsha":
            body = r.script_load(body)
        name = {"evalsha": "EVALSHA", "evalsha_missing": "EVALSHA", "eval": "EVAL",
                "eval_ro": "EVAL_RO"}[method]
        try:
            out.append(r.execute_command(name, body, *rest))
        except redis.ResponseError as err:
            out.append(("error", str(err).split(" script:")[0]))
    return out


def counters(r: redis.Redis) -> dict:
    """{command: (calls, rejected_calls, failed_calls)}, without INFO's own line."""
    return {name[len("cmdstat_"):]: (s["calls"], s["rejected_calls"], s["failed_calls"])
            for name, s in r.info("commandstats").items() if name != "cmdstat_info"}


@pytest.fixture(scope="module")
def sluice() -> Iterator[SluiceServer]:
    with SluiceServer(["--save", ""]) as server:
        yield server


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_commandstats_of_scripts_match_redis(scenario, sluice, redis_server):
    seen = {}
    for side, port in (("sluice", sluice.port), ("redis", redis_server[1])):
        r = redis.Redis(port=port)
        r.flushall()
        r.script_flush()
        r.config_resetstat()
        replies = run(r, SCENARIOS[scenario])
        seen[side] = (replies, counters(r))
        r.close()
    assert seen["sluice"][0] == seen["redis"][0]
    assert seen["sluice"][1] == seen["redis"][1]
