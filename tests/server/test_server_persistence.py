"""Persistence through sluice-server (a real subprocess): SAVE/BGSAVE/LASTSAVE, save
points, BGREWRITEAOF in a forked child and the automatic rewrite, CONFIG SET
appendonly at runtime, SHUTDOWN SAVE/NOSAVE, INFO persistence, and the temporary
file of a save interrupted by kill -9."""
from __future__ import annotations

import os
import signal
import time

import redis

from servers import SluiceServer
from preloaded import kill_and_wait

ENTRIES = 600


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_save_bgsave_lastsave_and_reload():
    with SluiceServer(["--save", ""]) as server:
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
    with SluiceServer(["--save", "1 3"]) as server:
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

    with SluiceServer(["--save", "3600 1"]) as server:
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
    with SluiceServer(args) as server:
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
    with SluiceServer(["--save", ""]) as server:
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


def stopped_while_writing(server: SluiceServer, r: redis.Redis) -> tuple[int, str]:
    """Starts a BGSAVE and stops (SIGSTOP) its child while its temporary file, named
    after it, exists (before the rename): the child's pid and that file."""
    assert r.bgsave() is True
    deadline = time.monotonic() + 10
    while True:
        assert time.monotonic() < deadline, "no temporary file seen"
        temps = [n for n in os.listdir(server.dir) if n.endswith("-dump.sluice")]
        if temps:
            break
    child = int(temps[0].split("-")[1])
    os.kill(child, signal.SIGSTOP)
    temp = os.path.join(server.dir, temps[0])
    assert os.path.exists(temp), "the save ended before the child was stopped"
    return child, temp


def snapshot_under_way(tmp_path) -> tuple[SluiceServer, redis.Redis, bytes]:
    """A server whose SAVE wrote the real snapshot (its bytes), with enough data
    (40 MB that do not compress) that a BGSAVE takes a while."""
    server = SluiceServer(["--save", ""], workdir=str(tmp_path)).start()
    r = redis.Redis(port=server.port)
    pipe = r.pipeline(transaction=False)
    for _ in range(ENTRIES):
        pipe.xadd("s", {"n": os.urandom(65536)})
    pipe.execute()
    assert r.save() is True
    with open(os.path.join(server.dir, "dump.sluice"), "rb") as fh:
        return server, r, fh.read()


def test_a_snapshot_left_half_written_by_kill_9_is_removed_at_restart(tmp_path):
    """kill -9 during BGSAVE leaves the child's temporary file (its writer died with
    the server); the next owner of the directory removes it and loads the snapshot."""
    server, r, saved = snapshot_under_way(tmp_path)
    try:
        child, temp = stopped_while_writing(server, r)
        kill_and_wait([server.proc.pid, child])
        server.stop()
        assert os.path.exists(temp)
        server.start()
        assert not os.path.exists(temp)
        assert f"Removed {os.path.basename(temp)}" in server.log_text()
        with open(os.path.join(server.dir, "dump.sluice"), "rb") as fh:
            assert fh.read() == saved
        assert redis.Redis(port=server.port).xlen("s") == ENTRIES
    finally:
        server.close()


def test_a_killed_bgsave_child_leaves_no_temporary_file(tmp_path):
    """The child cannot clean up after kill -9: the server does when it reaps it."""
    server, r, saved = snapshot_under_way(tmp_path)
    try:
        child, temp = stopped_while_writing(server, r)
        kill_and_wait([child])
        wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
        assert r.info("persistence")["rdb_last_bgsave_status"] == "err"
        assert not os.path.exists(temp)
        with open(os.path.join(server.dir, "dump.sluice"), "rb") as fh:
            assert fh.read() == saved
    finally:
        server.close()
