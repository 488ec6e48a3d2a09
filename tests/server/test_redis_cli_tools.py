"""The real redis-cli's operator modes against sluice-server: --latency,
--latency-history, --stat, --bigkeys, --memkeys, --scan and monitor run without
errors and show sane figures; --bigkeys' summary is the one redis-cli prints for
redis-server 7.0 holding the same keys."""
from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time

import pytest
import redis

from servers import RedisServer, SluiceServer

pytestmark = pytest.mark.skipif(shutil.which("redis-cli") is None,
                                reason="redis-cli is not installed")


def fill(r: redis.Redis) -> None:
    r.flushall()
    for i in range(200):
        r.set(f"k{i}", "v" * i)
    r.rpush("biglist", *range(1000))
    r.hset("h", mapping={f"f{i}": i for i in range(100)})
    r.sadd("s", *range(50))
    r.zadd("z", {f"m{i}": i for i in range(30)})
    r.xadd("st", {"a": 1})


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as server:
        fill(redis.Redis(port=server.port))
        yield server


def cli(port: int, *args: str, timeout: float = 30) -> str:
    """redis-cli's output of a mode that ends by itself; it must succeed quietly."""
    done = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def streamed(port: int, *args: str, seconds: float, during=None) -> str:
    """The output of a mode that runs until interrupted (line-buffered, then SIGINT)."""
    proc = subprocess.Popen(["stdbuf", "-oL", "redis-cli", "-p", str(port), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        if during is not None:
            during()
        time.sleep(seconds)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert err == "" and "ERR" not in out, err or out
    return out


def sane_latency(line: str) -> None:
    low, high, average, samples = line.split()
    assert 0 <= int(low) <= float(average) <= int(high) < 1000
    assert int(samples) > 0


def test_latency(sluice) -> None:
    sane_latency(cli(sluice.port, "--latency", timeout=10).strip())


def test_latency_history(sluice) -> None:
    out = streamed(sluice.port, "--latency-history", "-i", "1", seconds=1.6)
    assert re.search(r" -- 1\.\d\d seconds range", out)
    lines = [line for line in out.splitlines() if line and "range" not in line]
    assert len(lines) > 10
    for line in lines:
        sane_latency(line.strip())


def test_stat(sluice) -> None:
    r = redis.Redis(port=sluice.port)
    out = streamed(sluice.port, "--stat", "-i", "0.5", seconds=1.2,
                   during=lambda: [r.incr("stat-counter") for _ in range(100)])
    rows = [line.split() for line in out.splitlines()[2:] if line.strip()]
    assert len(rows) >= 2
    keys = [int(row[0]) for row in rows]
    requests = [int(row[4]) for row in rows]
    assert keys[-1] == r.dbsize()
    assert requests == sorted(requests) and requests[-1] - requests[0] >= 100
    assert all(int(row[2]) >= 1 and int(row[3]) == 0 for row in rows)   # clients, blocked
    assert all(re.fullmatch(r"[\d.]+[BKMGT]", row[1]) for row in rows)     # used_memory
    r.delete("stat-counter")


def summary(out: str) -> list:
    return out[out.index("-------- summary -------"):].splitlines()


def test_bigkeys_matches_redis(sluice) -> None:
    ours = cli(sluice.port, "--bigkeys")
    with RedisServer() as oracle:
        fill(redis.Redis(port=oracle.port))
        theirs = cli(oracle.port, "--bigkeys")
    assert summary(ours) == summary(theirs)
    assert "Biggest   list found '\"biglist\"' has 1000 items" in ours


def test_memkeys(sluice) -> None:
    out = cli(sluice.port, "--memkeys")
    assert "Sampled 205 keys in the keyspace!" in out
    found = dict(re.findall(r"Biggest +(\w+) found '\"[^\"]+\"' has (\d+) bytes", out))
    assert set(found) == {"list", "hash", "string", "stream", "set", "zset"}
    assert all(int(size) > 0 for size in found.values())
    assert int(found["list"]) > int(found["zset"])


def test_scan(sluice) -> None:
    keys = cli(sluice.port, "--scan", "--pattern", "k1*").split()
    assert sorted(keys) == sorted(["k1"] + [f"k1{i}" for i in range(10)]
                                  + [f"k1{i:02d}" for i in range(100)])


def test_monitor(sluice) -> None:
    r = redis.Redis(port=sluice.port)
    r.ping()                                # (its handshake is done before)
    out = streamed(sluice.port, "monitor", seconds=0.5,
                   during=lambda: (r.set("a", "b"), r.eval("return redis.call('get', 'a')", 0)))
    lines = out.splitlines()
    assert lines[0] == "OK"
    shown = [re.sub(r"^\d+\.\d{6} \[0 ([\d.]+:\d+|lua)\] ", "", line) for line in lines[1:]]
    assert shown == ['"SET" "a" "b"', '"EVAL" "return redis.call(\'get\', \'a\')" "0"',
                     '"get" "a"']
    assert "Traceback" not in sluice.log_text()
