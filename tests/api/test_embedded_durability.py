"""What the embedded engine keeps, checked the way a user would meet it: an engine in
a real subprocess that ends by return, sys.exit, an unhandled exception, os._exit or
kill -9, under each appendfsync policy and with snapshots only; the directory is then
reopened and compared with what README.md ("What each mode survives") promises. The
table's power-loss column too: the power is cut after a run ending by os._exit
(tests/preloaded.py keeps only what was fsynced).

Also: a write is in the file (readable by another process) as soon as `execute`
returns, whatever the policy; a batch (a pipeline, MULTI/EXEC) is one write(2) and a
read none; an engine dropped without close() closes its files."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import pytest

from engine import Engine
from engine.api.client import EmbeddedRedis
from persist.durability import DEFAULT_SAVE_POINTS
from preloaded import PowerSupply

pytestmark = pytest.mark.slow    # writers killed and restarted, power cuts

MODES = {
    "always": {"appendonly": True, "appendfsync": "always"},
    "everysec": {"appendonly": True, "appendfsync": "everysec"},
    "no": {"appendonly": True, "appendfsync": "no"},
    # One change and 2 s since the last save make a save point (LASTSAVE has whole
    # seconds, so 2 s keep the first writes, made at once, clear of it).
    "snapshots": {"save": [(2, 1)]},
}
EXITS = ["return", "global", "sys.exit", "exception", "os._exit", "kill -9"]
CLEAN_EXITS = {"return", "global", "sys.exit", "exception"}

# The child writes entries 1-3, (snapshots: waits until the save point is due, so
# that entry 4's write call saves), then 4-7, and ends as told.
CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from engine import Engine

    def main(directory, mode, how, options):
        engine = Engine(dir=directory, **options)
        if how == "global":
            globals()["KEPT"] = engine
        for i in range(1, 4):
            engine.execute("XADD", "s", f"{i}-0", "n", i)
        if mode == "snapshots":
            time.sleep(2.2)
        for i in range(4, 8):
            engine.execute("XADD", "s", f"{i}-0", "n", i)
        print(time.monotonic(), flush=True)             # the last write returned
        if how == "sys.exit":
            sys.exit(3)
        if how == "exception":
            raise RuntimeError("unhandled")
        if how in ("os._exit", "kill -9"):
            time.sleep(1.5)                             # AFTER_THE_LAST_WRITE
            if how == "os._exit":
                os._exit(0)
            os.kill(os.getpid(), signal.SIGKILL)

    main(sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4]))
""")
EXIT_STATUS = {"return": 0, "global": 0, "sys.exit": 3, "exception": 1, "os._exit": 0,
               "kill -9": -9}


def promised_entries(mode: str, how: str) -> int:
    """README.md: every AOF policy keeps everything through process death (the data
    was handed to the OS when execute returned); snapshots only keep, after a death
    without cleanup, exactly what the last save held (entry 4's call saved 1-4)."""
    if how in CLEAN_EXITS or mode != "snapshots":
        return 7
    return 4


def reopen_entries(directory, mode: str) -> list:
    engine = Engine(dir=str(directory), **MODES[mode])
    try:
        return engine.execute("XRANGE", "s", "-", "+")
    finally:
        engine.close(save=False)


@pytest.mark.parametrize("how", EXITS)
@pytest.mark.parametrize("mode", list(MODES))
def test_what_each_way_of_ending_keeps(tmp_path, mode, how):
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), mode, how,
                           repr(MODES[mode])], capture_output=True, timeout=60)
    assert proc.returncode == EXIT_STATUS[how], proc.stderr.decode()
    assert b"Exception ignored" not in proc.stderr, proc.stderr.decode()
    n = promised_entries(mode, how)
    assert reopen_entries(tmp_path, mode) == [
        [f"{i}-0".encode(), [b"n", str(i).encode()]] for i in range(1, n + 1)]


AFTER_THE_LAST_WRITE = 1.5      # s the child sleeps before os._exit


@pytest.mark.parametrize("mode", list(MODES))
def test_what_a_power_cut_after_the_run_keeps(preloaded_library, tmp_path, mode):
    """README's power-loss column, for a child ending by os._exit 1.5 s after its
    last write: always keeps everything; everysec everything but about the last
    second: its thread began an fsync within the 1.5 s, with no further call, and
    what that fsync began with is kept (all 7, unless a slow disk had not finished
    it by the exit); no keeps what the OS wrote back (here: nothing fsynced, so
    nothing), snapshots only the last snapshot (entries 1-4)."""
    project = tmp_path / "project"
    project.mkdir()
    data = project / "data"                          # new: the engine creates it
    supply = PowerSupply(preloaded_library, str(project), str(tmp_path / "image"), keep=())
    proc = subprocess.run([sys.executable, "-c", CHILD, str(data), mode, "os._exit",
                           repr(MODES[mode])], capture_output=True, timeout=60,
                          env=supply.env())
    assert proc.returncode == 0, proc.stderr.decode()
    last_write = float(proc.stdout)
    supply.cut(None)
    supply.restore()
    kept = reopen_entries(data, mode)
    assert kept == [[f"{i}-0".encode(), [b"n", str(i).encode()]] for i in range(1, len(kept) + 1)]
    if mode == "everysec":
        later = [c for c in supply.syncs() if c.path.endswith(".incr.aof") and c.began > last_write]
        assert later and later[0].began - last_write < AFTER_THE_LAST_WRITE, supply.syncs()
        expected = 7 if later[0].ended is not None else len(kept)
    else:
        expected = {"always": 7, "no": 0, "snapshots": 4}[mode]
    assert len(kept) == expected


# -- the write at the end of each call -------------------------------------------------

def file_bytes_seen_by_another_process(path) -> bytes:
    return subprocess.run(["cat", str(path)], capture_output=True, check=True).stdout


def incr_file(directory) -> str:
    aof_dir = os.path.join(directory, "appendonlydir")
    (name,) = [n for n in os.listdir(aof_dir) if n.endswith(".incr.aof")]
    return os.path.join(aof_dir, name)


@pytest.mark.parametrize("policy", ["everysec", "no"])
def test_a_write_is_in_the_file_when_execute_returns(tmp_path, policy):
    """Not when 64 KiB are buffered, nor a second later: at once."""
    engine = Engine(dir=str(tmp_path), appendonly=True, appendfsync=policy)
    try:
        engine.execute("XADD", "s", "1-0", "field", "value-one")
        assert b"value-one" in file_bytes_seen_by_another_process(incr_file(tmp_path))
        engine.execute("SET", "k", "value-two")
        assert b"value-two" in file_bytes_seen_by_another_process(incr_file(tmp_path))
    finally:
        engine.close()


def write_syscalls() -> int:
    """This process's write(2) calls so far (the kernel's count, all threads)."""
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("syscw:"):
                return int(line.split()[1])
    raise AssertionError("no syscw in /proc/self/io")


def test_a_pipeline_or_a_transaction_is_one_write_and_a_read_none(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no")
    client = EmbeddedRedis(engine=engine)
    try:
        client.ping()                          # the connection is made outside the count
        for transaction in (False, True):
            pipe = client.pipeline(transaction=transaction)
            for i in range(50):
                pipe.xadd(f"s{transaction}", {"i": i})
            before = write_syscalls()
            assert len(pipe.execute()) == 50
            assert write_syscalls() - before == 1
            data = file_bytes_seen_by_another_process(incr_file(tmp_path))
            assert data.count(f"s{transaction}".encode()) == 50
        assert data.count(b"MULTI") == data.count(b"EXEC") == 1
        before = write_syscalls()
        assert client.xlen("sTrue") == 50
        client.pipeline(transaction=False).xlen("sFalse").get("nothing").execute()
        engine.execute("XRANGE", "sTrue", "-", "+")
        assert write_syscalls() == before
    finally:
        client.close()
        engine.close()


def test_a_pipeline_blocked_in_a_read_holds_back_no_write(tmp_path):
    """While a pipeline waits in XREAD BLOCK, other clients run: what the pipeline
    wrote before it and what they write reach the file when each call returns."""
    engine = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no")
    waiting, other = EmbeddedRedis(engine=engine), EmbeddedRedis(engine=engine)
    replies = []

    def pipeline() -> None:
        pipe = waiting.pipeline(transaction=False)
        pipe.xadd("before", {"f": "pipelined-first"})
        pipe.xread({"wake": "$"}, block=20000)
        replies.extend(pipe.execute())

    thread = threading.Thread(target=pipeline)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while b"pipelined-first" not in file_bytes_seen_by_another_process(incr_file(tmp_path)):
            assert time.monotonic() < deadline, "the pipeline's XADD never reached the file"
            time.sleep(0.02)
        other.xadd("other", {"f": "from-another-client"})
        assert b"from-another-client" in file_bytes_seen_by_another_process(incr_file(tmp_path))
    finally:
        other.xadd("wake", {"f": "go"})
        thread.join(30)
    assert replies[1][0][0] == b"wake"
    engine.close()


# -- closing -----------------------------------------------------------------------------

def open_files_under(directory) -> list:
    """Paths under `directory` that this process has open (from /proc/self/fd)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory)):
            found.append(target)
    return found


@pytest.mark.parametrize("mode", list(MODES))
def test_an_engine_dropped_unclosed_closes_its_files(tmp_path, mode):
    engine = Engine(dir=str(tmp_path), **MODES[mode])
    engine.execute("XADD", "s", "1-0", "n", 1)
    ref = weakref.ref(engine)
    threads = {t for t in threading.enumerate() if t.name == "aof-fsync"}
    assert open_files_under(tmp_path) or mode == "snapshots"
    del engine
    gc.collect()
    assert ref() is None                      # nothing kept the engine alive
    assert open_files_under(tmp_path) == []
    assert not any(t.is_alive() for t in threads)
    assert reopen_entries(tmp_path, mode) == [[b"1-0", [b"n", b"1"]]]


def test_close_is_idempotent(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True)
    engine.execute("XADD", "s", "1-0", "n", 1)
    engine.close()
    engine.close()
    assert reopen_entries(tmp_path, "everysec") == [[b"1-0", [b"n", b"1"]]]


def test_a_directory_without_aof_is_snapshotted_at_close_by_default(tmp_path):
    """Redis's default save points apply unless `save` is given."""
    engine = Engine(dir=str(tmp_path))
    assert engine.durability.save_points == list(DEFAULT_SAVE_POINTS)
    engine.execute("XADD", "s", "1-0", "n", 1)
    engine.close()
    again = Engine(dir=str(tmp_path))
    assert again.execute("XLEN", "s") == 1
    again.close()


FORKED = textwrap.dedent("""
    import os, sys
    from engine import Engine

    engine = Engine(dir=sys.argv[1])             # snapshots only, Redis's save points
    engine.execute("XADD", "s", "1-0", "n", 1)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                 # ends normally once the parent closed
        os.read(r, 1)
        sys.exit(0)
    engine.execute("XADD", "s", "2-0", "n", 2)
    engine.close()
    os.write(w, b"x")
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
""")


def test_a_forked_child_leaves_the_files_to_its_parent(tmp_path):
    """The child's copy of the engine, closed at its exit, would save its older
    state over the parent's last snapshot."""
    proc = subprocess.run([sys.executable, "-c", FORKED, str(tmp_path)],
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    again = Engine(dir=str(tmp_path))
    assert again.execute("XLEN", "s") == 2
    again.close(save=False)


def test_a_closed_persistent_engine_refuses_commands(tmp_path):
    engine = Engine(dir=str(tmp_path))
    engine.close()
    with pytest.raises(RuntimeError, match="closed"):
        engine.execute("XADD", "s", "*", "n", 1)
    memory_only = Engine()
    memory_only.close()
    assert memory_only.execute("XADD", "s", "1-0", "n", 1) == b"1-0"


def test_an_engine_removes_only_its_own_leftover_temporary_snapshots(tmp_path):
    """Files named as our interrupted saves name them go at start (the default name's
    and the earlier default dump.rdb's); anything else, Redis's temp-PID.rdb
    included, stays: it is not ours to judge."""
    with Engine(dir=str(tmp_path)) as engine:
        engine.execute("XADD", "s", "1-1", "f", "v")
    saved = (tmp_path / "dump.sluice").read_bytes()
    ours = ["temp-123-dump.sluice", "temp-7-dump.rdb"]
    others = ["temp-123.rdb", "temp-notes.txt", "temp-x-dump.sluice", "temp-1-dump.sluice.bak"]
    for name in ours + others:
        (tmp_path / name).write_bytes(b"half a snapshot")
    with Engine(dir=str(tmp_path)) as engine:
        assert engine.execute("XLEN", "s") == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("temp-")) == \
        sorted(others)
    assert (tmp_path / "dump.sluice").read_bytes() == saved


def counting_timer(engine: Engine) -> list:
    """Counts the runs of the durability's timer work (cron) after write calls."""
    durability = engine.durability
    runs, cron = [], durability.cron
    durability.cron = lambda: (runs.append(1), cron())
    return runs


def test_write_calls_run_the_timer_only_when_a_save_point_may_have_passed(tmp_path):
    """The end of a write call compares the changes and the clock with the floors of
    the save points instead of running the timer's work each time; a save point
    still starts at the very call that passes it, by changes or by time."""
    engine = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no",
                    save=[(3600, 1), (0, 5)])
    runs = counting_timer(engine)
    for i in range(4):
        engine.execute("XADD", "s", "*", "n", i)
    assert len(runs) == 1 and engine.durability.rdb_saves == 0   # the first sets floors
    engine.execute("XADD", "s", "*", "n", 4)                     # the 5th change
    assert engine.durability.rdb_saves == 1 and (tmp_path / "dump.sluice").exists()
    engine.close(save=False)

    engine = Engine(dir=str(tmp_path / "by_time"), save=[(1, 1)])
    runs = counting_timer(engine)
    engine.execute("XADD", "s", "*", "n", 1)
    if time.time() - engine.durability.lastsave <= 1:       # not yet past the second
        engine.execute("XADD", "s", "*", "n", 2)
        assert len(runs) == 1 and engine.durability.rdb_saves == 0
        time.sleep(engine.durability.lastsave + 1.05 - time.time())
    engine.execute("XADD", "s", "*", "n", 3)
    assert engine.durability.rdb_saves == 1
    engine.close(save=False)
