"""INFO commandstats of scripts beside redis-server 7.0's: the commands a script calls count
under their own names (calls, rejected_calls, failed_calls), and EVAL/EVALSHA themselves
too. The same scripts run on both servers; the counters are compared, not the times."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from servers import SluiceServer

WRITE_AND_READ = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])"

# commands run in order on a flushed server after CONFIG RESETSTAT (EVALSHA's script is
# loaded first, unless it is a sha already); an error reply is part of the scenario (both
# servers must give one)
SCENARIOS = {
    "calls": [
        ("EVAL", WRITE_AND_READ, 1, "k", "v"),
        ("EVALSHA", WRITE_AND_READ, 1, "k", "w"),
        ("EVAL", "return redis.call('incr', KEYS[1])", 1, "n"),
        ("EVAL", "redis.call('ping'); return redis.call('echo', 'x')", 0),
        ("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k"),
        ("EVAL", "redis.call('xadd', KEYS[1], '1-1', 'f', 'v'); "
                 "redis.call('xgroup', 'create', KEYS[1], 'g', '0'); "
                 "return redis.call('xinfo', 'stream', KEYS[1])[2]", 1, "s"),
    ],
    "in a transaction": [
        ("MULTI",),
        ("EVAL", WRITE_AND_READ, 1, "k", "v"),
        ("EVAL", "return redis.call('incr', KEYS[1])", 1, "k"),
        ("EVAL", "return redis.pcall('get')", 0),
        ("EXEC",),
    ],
    "refused and failed in pcall": [
        ("EVAL", "redis.call('set', 'str', 'x'); redis.pcall('nosuch'); "
                 "redis.pcall('get'); redis.pcall('incr', 'str'); "
                 "redis.pcall('xinfo', 'stream'); redis.pcall('xinfo', 'nosuch'); "
                 "redis.pcall('multi'); redis.pcall('xgroup', 'create', 'nokey', 'g', '0'); "
                 "return 1", 0),
        ("EVAL_RO", "redis.pcall('set', KEYS[1], 'x'); return redis.pcall('get', KEYS[1])",
         1, "k"),
        ("EVAL", "return redis.pcall('xread', 'block', '0', 'streams', 's', '$')", 0),
        ("EVAL", "return redis.pcall('xreadgroup', 'group', 'g', 'c', 'block', '0', "
                 "'streams', 's', '>')", 0),
    ],
    "scripts that fail": [
        ("EVAL", "redis.call('set', 'a', '1'); redis.call('incr', 'str'); return 1", 0),
        ("EVAL", "redis.call('set', 'str', 'x'); return redis.call('incr', 'str')", 0),
        ("EVAL", "return redis.call('nosuch')", 0),
        ("EVAL", "return redis.call('get')", 0),
        ("EVAL", "error('boom')", 0),
        ("EVAL", "return 1", -1),
        ("EVAL", "return 1", 3, "a"),
        ("EVAL", "return 1", "x"),
        ("EVAL", "return (", 0),
        ("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0),
        ("EVAL_RO", "return redis.call('set', KEYS[1], 'x')", 1, "k"),
        ("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')", 1, "k"),
        ("EVAL_RO", "#!lua\nreturn 1", 0),
        ("EVAL", "return redis.call('xread', 'block', '0', 'streams', 's', '$')", 0),
    ],
}


def run(r: redis.Redis, steps: list) -> list:
    """Runs the steps; the replies (errors as their text)."""
    out = []
    for name, *args in steps:
        if name == "EVALSHA" and len(args[0]) != 40:
            args[0] = r.script_load(args[0])
        try:
            out.append(comparable(r.execute_command(name, *args)))
        except redis.ResponseError as err:
            out.append(comparable(err))
    return out


def comparable(reply):
    """A reply with its errors (EXEC's too) as their text, without the script's sha."""
    if isinstance(reply, list):
        return [comparable(item) for item in reply]
    if isinstance(reply, redis.ResponseError):
        return ("error", str(reply).split(" script:")[0])
    return reply


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
