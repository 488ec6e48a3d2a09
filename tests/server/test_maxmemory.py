"""maxmemory against a real sluice-server: noeviction refuses writes with Redis's OOM text
and keeps RSS near the limit with nothing acknowledged lost across kill -9; the LRU and
TTL policies evict the keys they should (statistically, as Redis's unit/maxmemory does)."""
import os
import time

import pytest
import redis

from preloaded import kill_and_wait
from servers import SluiceServer

# redis-py turns the OOM prefix into OutOfMemoryError and keeps the rest as the message.
OOM_TEXT = "command not allowed when used memory > 'maxmemory'."
MB = 1024 * 1024


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_noeviction_fills_to_the_limit_refuses_writes_serves_reads_and_loses_nothing(tmp_path):
    """The server's baseline (the interpreter and the engine, empty) is its RSS before
    the first write; the data it then takes may grow RSS by at most 110% of maxmemory."""
    limit = 100 * MB
    args = ["--maxmemory", "100mb", "--appendonly", "yes", "--appendfsync", "always",
            "--save", ""]
    acked = []
    with SluiceServer(args, workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        baseline = rss(server.proc.pid)
        value = b"v" * 100
        refused = None
        i = 0
        while refused is None:
            pipe = r.pipeline(transaction=False)
            for j in range(i, i + 2000):
                pipe.set(b"k:%d" % j, value)
            for j, result in enumerate(pipe.execute(raise_on_error=False), start=i):
                if isinstance(result, redis.ResponseError):
                    refused = result
                    break
                acked.append(j)
            i += 2000
        assert isinstance(refused, redis.exceptions.OutOfMemoryError)
        assert str(refused).endswith(OOM_TEXT)
        with pytest.raises(redis.exceptions.OutOfMemoryError) as refusal:
            r.set(b"another", value)
        assert str(refusal.value) == OOM_TEXT
        assert r.get(b"k:0") == value           # reads are served
        assert r.dbsize() == len(acked)
        assert r.delete(b"k:0") == 1            # DEL frees memory: not denyoom
        acked.remove(0)
        growth = rss(server.proc.pid) - baseline
        info = r.info("memory")
        print(f"keys={len(acked)} used_memory={info['used_memory']} rss_growth={growth} "
              f"baseline={baseline}")
        assert info["maxmemory"] == limit and info["maxmemory_policy"] == "noeviction"
        assert growth <= 1.10 * limit
        kill_and_wait([server.proc.pid])
        server.proc = None
    with SluiceServer(["--appendonly", "yes", "--save", ""], workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        assert r.dbsize() == len(acked)
        pipe = r.pipeline(transaction=False)
        for j in acked:
            pipe.exists(b"k:%d" % j)
        assert all(pipe.execute())


def _fill(r: redis.Redis, prefix: bytes, n: int, ex: int = 0) -> None:
    pipe = r.pipeline(transaction=False)
    for j in range(n):
        if ex:
            pipe.set(prefix + b"%d" % j, b"x" * 100, ex=ex + j)
        else:
            pipe.set(prefix + b"%d" % j, b"x" * 100)
    pipe.execute()


def test_allkeys_lru_keeps_the_hot_keys_more_than_the_others(tmp_path):
    with SluiceServer(["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru",
                       "--notify-keyspace-events", "Ee", "--save", ""],
                      workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        _fill(r, b"cold:", 3000)
        hot = [b"cold:%d" % j for j in range(0, 3000, 30)]      # 100 of them
        r.get(b"cold:0")
        time.sleep(1.1)                                         # LRU times in ms: space them
        for round_ in range(20):
            pipe = r.pipeline(transaction=False)
            for key in hot:
                pipe.get(key)
            pipe.execute()
            _fill(r, b"new%d:" % round_, 500)
        info = r.info()
        assert info["evicted_keys"] > 0
        assert info["used_memory"] <= 2 * MB
        hot_alive = sum(r.exists(k) for k in hot) / len(hot)
        others = [b"cold:%d" % j for j in range(3000) if j % 30]
        cold_alive = sum(r.exists(k) for k in others) / len(others)
        assert hot_alive > cold_alive + 0.5, (hot_alive, cold_alive)


def test_volatile_ttl_evicts_the_shortest_ttl_first_and_leaves_keys_without_ttl(tmp_path):
    with SluiceServer(["--maxmemory", "1mb", "--maxmemory-policy", "volatile-ttl", "--save", ""],
                      workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        _fill(r, b"keep:", 1000)
        _fill(r, b"ttl:", 6000, ex=1000)          # TTLs 1000 .. 6999 s
        assert r.info()["evicted_keys"] > 0
        assert all(r.exists(b"keep:%d" % j) for j in range(1000))
        alive = [j for j in range(6000) if r.exists(b"ttl:%d" % j)]
        gone = 6000 - len(alive)
        assert gone > 0
        # the survivors are the longest TTLs, nearly all of them (sampling is approximate)
        assert sum(1 for j in alive if j >= gone) >= 0.9 * len(alive)


def test_volatile_policy_with_no_ttl_keys_refuses_writes(tmp_path):
    with SluiceServer(["--maxmemory", "1mb", "--maxmemory-policy", "volatile-lru", "--save", ""],
                      workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        with pytest.raises(redis.exceptions.OutOfMemoryError, match="used memory > 'maxmemory'"):
            _fill(r, b"k:", 10000)
        assert r.info()["evicted_keys"] == 0


def test_evicted_keys_fire_the_evicted_event_and_are_logged_as_del(tmp_path):
    with SluiceServer(["--maxmemory", "1mb", "--maxmemory-policy", "allkeys-random",
                       "--notify-keyspace-events", "Ee", "--appendonly", "yes", "--save", ""],
                      workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        sub = r.pubsub()
        sub.psubscribe("__keyevent@0__:evicted")
        sub.get_message(timeout=1)
        _fill(r, b"k:", 8000)
        message = sub.get_message(timeout=2)
        assert message is not None and message["channel"] == b"__keyevent@0__:evicted"
        evicted = r.info()["evicted_keys"]
        assert evicted > 0 and r.dbsize() == 8000 - evicted
        sub.close()
    aof = b"".join(p.read_bytes() for p in (tmp_path / "appendonlydir").glob("*.incr.aof"))
    assert aof.count(b"*2\r\n$3\r\nDEL\r\n") == evicted


def test_memory_directives_and_object_freq_idletime(tmp_path):
    with SluiceServer(["--save", ""], workdir=tmp_path) as server:
        r = redis.Redis(port=server.port)
        r.config_set("maxmemory", "1gb")
        assert r.config_get("maxmemory") == {"maxmemory": str(1024 ** 3)}
        r.config_set("maxmemory", 0)
        for name, bad in (("maxmemory-samples", 0), ("maxmemory-eviction-tenacity", 101),
                          ("lfu-log-factor", -1), ("lfu-decay-time", -1)):
            with pytest.raises(redis.ResponseError, match="must be between"):
                r.config_set(name, bad)
        r.set("a", 1)
        with pytest.raises(redis.ResponseError, match="An LFU maxmemory policy is not selected"):
            r.object("freq", "a")
        r.config_set("maxmemory-policy", "allkeys-lfu")
        with pytest.raises(redis.ResponseError, match="An LFU maxmemory policy is selected"):
            r.object("idletime", "a")
        r.set("b", 1)
        assert r.object("freq", "b") == 5            # LFU_INIT_VAL for a new key
        for _ in range(200):
            r.get("b")
        assert r.object("freq", "b") > 5
        assert r.object("freq", "nokey") is None


OOM_CASES = [
    ("SET", "x", "1"), ("GET", "a"), ("EXPIRE", "a", "100"), ("APPEND", "a", "x"),
    ("MULTI",), ("SET", "y", "1"), ("GET", "a"), ("EXEC",),
    ("MULTI",), ("GET", "a"), ("DISCARD",),
    ("EVAL", "return redis.call('set','q','b')", "0"),
    ("EVAL", "return redis.pcall('set','q','b')", "0"),
    ("EVAL", "return redis.call('get','a')", "0"),
    ("EVAL_RO", "return redis.call('get','a')", "0"),
    ("EVAL", "#!lua\nreturn 1", "0"),
    ("EVAL", "#!lua flags=no-writes\nreturn 1", "0"),
    ("FCALL", "w", "0"), ("FCALL", "r", "0"), ("FCALL_RO", "r", "0"),
    ("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('x', function() end)"),
]
LIBRARY = ("#!lua name=lib\nredis.register_function('w', function() return 1 end)\n"
           "redis.register_function{function_name='r', callback=function() return 2 end, "
           "flags={'no-writes'}}")


def _oom_replies(port: int) -> list:
    r = redis.Redis(port=port)
    r.set("a", "1")
    r.function_load(LIBRARY)
    r.config_set("maxmemory", 1)
    out = []
    for args in OOM_CASES:
        try:
            out.append(repr(r.execute_command(*args)))
        except redis.ResponseError as error:
            out.append(f"{type(error).__name__}: {error}")
    r.config_set("maxmemory", 0)
    return out


def test_oom_refusals_of_commands_transactions_scripts_and_functions_match_redis(tmp_path):
    """Over maxmemory under noeviction: denyoom commands, anything queued in MULTI (the
    EXEC then aborts), script writes (a script without a shebang at its first write,
    one with a shebang that may write at its start), FCALL of a function that may write."""
    from servers import RedisServer
    with RedisServer(["--save", ""]) as theirs, \
            SluiceServer(["--save", ""], workdir=tmp_path) as ours:
        assert _oom_replies(ours.port) == _oom_replies(theirs.port)
