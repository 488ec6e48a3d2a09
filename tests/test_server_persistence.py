"""Persistence through sluice-server (a real subprocess): SAVE/BGSAVE/LASTSAVE, save
points, BGREWRITEAOF in a forked child and the automatic rewrite, CONFIG SET
appendonly at runtime, SHUTDOWN SAVE/NOSAVE, and INFO persistence."""
from __future__ import annotations

import os
import time

import redis

from engine.server.testing import ServerProcess


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_save_bgsave_lastsave_and_reload():
    with ServerProcess(["--save", ""]) as server:
        r = redis.Redis(port=server.port)
        r.xadd("s", {"f": "v"}, id="1-1")
        assert r.info("persistence")["rdb_changes_since_last_save"] == 1
        assert r.save() is True
        assert r.info("persistence")["rdb_changes_since_last_save"] == 0
        r.xadd("s", {"f": "v"}, id="2-1")
        first = r.lastsave()
        assert r.bgsave() is True
        wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
        info = r.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_saves"] == 2
        assert r.lastsave() >= first
        assert os.path.exists(os.path.join(server.dir, "dump.sluice"))
        server.stop()
        server.start()
        r = redis.Redis(port=server.port)
        assert [i for i, _ in r.xrange("s")] == [b"1-1", b"2-1"]


def test_save_points_trigger_a_background_save():
    with ServerProcess(["--save", "1 3"]) as server:
        r = redis.Redis(port=server.port)
        for i in range(3):
            r.set(f"k{i}", i)
        wait_for(lambda: r.info("persistence")["rdb_saves"] >= 1)
        assert r.info("persistence")["rdb_changes_since_last_save"] == 0


def test_shutdown_nosave_and_save():
    def shutdown(r, **how):
        try:
            r.shutdown(**how)
        except redis.ConnectionError:       # the server closes the connection
            pass

    with ServerProcess(["--save", "3600 1"]) as server:
        r = redis.Redis(port=server.port)
        r.set("k", "v")
        shutdown(r, nosave=True)
        server.stop()
        assert not os.path.exists(os.path.join(server.dir, "dump.sluice"))
        server.start()
        r = redis.Redis(port=server.port)
        assert r.get("k") is None
        r.set("k", "v")
        shutdown(r, save=True)
        server.stop()
        server.start()
        assert redis.Redis(port=server.port).get("k") == b"v"


def test_bgrewriteaof_and_automatic_rewrite():
    args = ["--appendonly", "yes", "--save", "", "--auto-aof-rewrite-percentage", "100",
            "--auto-aof-rewrite-min-size", "64kb"]
    with ServerProcess(args) as server:
        r = redis.Redis(port=server.port)
        assert r.execute_command("BGREWRITEAOF") is True
        wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
        rewrites = r.info("persistence")["aof_rewrites"]
        assert rewrites == 1
        pipe = r.pipeline(transaction=False)
        for i in range(3000):
            pipe.xadd("s", {"payload": "x" * 64})
        pipe.execute()
        wait_for(lambda: r.info("persistence")["aof_rewrites"] > rewrites)
        wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
        info = r.info("persistence")
        assert info["aof_last_bgrewrite_status"] == "ok"
        assert info["aof_current_size"] < 64 * 1024 * 2
        names = os.listdir(os.path.join(server.dir, "appendonlydir"))
        assert len([n for n in names if ".base." in n]) == 1
        server.stop()
        server.start()
        assert redis.Redis(port=server.port).xlen("s") == 3000


def test_appendonly_switched_on_at_runtime():
    with ServerProcess(["--save", ""]) as server:
        r = redis.Redis(port=server.port)
        r.set("before", "1")
        assert r.info("persistence")["aof_enabled"] == 0
        assert r.config_set("appendonly", "yes")
        assert r.info("persistence")["aof_enabled"] == 1
        r.set("after", "2")
        server.stop()
        server.args += ["--appendonly", "yes"]
        server.start()
        r = redis.Redis(port=server.port)
        assert r.mget("before", "after") == [b"1", b"2"]
