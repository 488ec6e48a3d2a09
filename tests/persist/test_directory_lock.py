"""One owner per data directory (persist/directory_lock.py), with real servers killed
with kill -9, real embedded engines in this process and in others, and sluice-aof run
as a subprocess: a second server or engine and every writing tool are refused while
the owner, a server or an engine, lives (naming its pid, changing nothing), a lock
file left by a killed owner blocks nobody, and forked BGSAVE/BGREWRITEAOF children
neither release the lock nor keep it after their parent is gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import redis

from engine import Engine
from servers import ROOT, SluiceServer, free_port
from persist.directory_lock import LOCK_NAME, DirectoryInUse, DirectoryLock
from persist.errors import PersistError
from persist.manifest import Manifest
from test_server_persistence import wait_for

AOF_ON = ["--appendonly", "yes", "--save", ""]
IN_USE = 3                                    # sluice-aof's exit code


def python(*args, stdin=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=ROOT, input=stdin, timeout=60)


def sluice_aof(*args) -> subprocess.CompletedProcess:
    return python("-m", "tools.aof_cli", *args)


def files_of(directory: str) -> dict:
    """Every file's bytes under the directory but the lock and the server's log."""
    out = {}
    for root, _, names in os.walk(directory):
        for name in names:
            if name not in (LOCK_NAME, "sluice.log"):
                path = os.path.join(root, name)
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, directory)] = fh.read()
    return out


def xadd(server: SluiceServer, n: int) -> redis.Redis:
    r = redis.Redis(port=server.port)
    for i in range(n):
        r.xadd("s", {"n": i})
    return r


def five_more_survive_kill_9(server: SluiceServer, r: redis.Redis) -> None:
    """The owner's writes after a refused intruder: acknowledged, then kept."""
    xadd(server, 5)
    assert r.xlen("s") == 10
    server.stop(signal.SIGKILL)
    server.start()
    assert redis.Redis(port=server.port).xlen("s") == 10


def run_server(directory, log, *args) -> subprocess.CompletedProcess:
    """A sluice-server run to its end (one that is refused exits at once)."""
    return subprocess.run(
        [sys.executable, "-m", "engine.server", "--port", str(free_port()), "--bind",
         "127.0.0.1", "--dir", str(directory), "--logfile", str(log), *args],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def in_use_by(pid: int, directory: str) -> str:
    return f"data directory {os.path.abspath(directory)} is in use by process {pid}"


def test_a_second_server_is_refused_and_the_first_goes_on():
    with SluiceServer(AOF_ON) as first:
        r = xadd(first, 5)
        log = os.path.join(first.dir, "second.log")
        second = run_server(first.dir, log, *AOF_ON)
        assert second.returncode == 1
        assert in_use_by(first.proc.pid, first.dir) in second.stderr
        with open(log) as fh:
            assert in_use_by(first.proc.pid, first.dir) in fh.read()
        five_more_survive_kill_9(first, r)


def test_a_refused_server_leaves_the_owners_pid_file_alone(tmp_path):
    """Two servers on one directory and one pidfile: the refused one (directory in
    use, or its port taken) neither overwrites the owner's pid file nor removes it."""
    pidfile = tmp_path / "sluice.pid"
    with SluiceServer([*AOF_ON, "--pidfile", str(pidfile)]) as first:
        assert pidfile.read_text() == f"{first.proc.pid}\n"
        same_dir = run_server(first.dir, tmp_path / "second.log", *AOF_ON,
                              "--pidfile", str(pidfile))
        assert same_dir.returncode == 1
        assert in_use_by(first.proc.pid, first.dir) in same_dir.stderr
        assert pidfile.read_text() == f"{first.proc.pid}\n"
        os.mkdir(tmp_path / "other")
        same_port = run_server(tmp_path / "other", tmp_path / "third.log", *AOF_ON,
                               "--pidfile", str(pidfile), "--port", str(first.port))
        assert same_port.returncode == 1
        assert "Failed listening on port" in (tmp_path / "third.log").read_text()
        assert pidfile.read_text() == f"{first.proc.pid}\n"
        assert first.stop() == 0
    assert not pidfile.exists()                  # removed by the server that wrote it


def test_a_second_engine_is_refused_in_this_process_and_in_another(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True)
    engine.execute("XADD", "s", "*", "n", "1")
    with pytest.raises(DirectoryInUse, match=in_use_by(os.getpid(), tmp_path)):
        Engine(dir=str(tmp_path), appendonly=True)
    other = python("-c", "from engine import Engine; import sys; "
                         "Engine(dir=sys.argv[1], appendonly=True)", tmp_path)
    assert other.returncode != 0
    assert in_use_by(os.getpid(), tmp_path) in other.stderr
    engine.execute("XADD", "s", "*", "n", "2")           # the owner is unharmed
    engine.close()
    with Engine(dir=str(tmp_path), appendonly=True) as again:  # free once closed
        assert again.execute("XLEN", "s") == 2


def test_a_failed_load_leaves_the_directory_free(tmp_path):
    os.makedirs(tmp_path / "appendonlydir")
    (tmp_path / "appendonlydir" / "appendonly.aof.manifest").write_bytes(b"garbage\n")
    for _ in range(2):                        # the second try is not refused by the first
        with pytest.raises(Exception) as failed:
            Engine(dir=str(tmp_path), appendonly=True)
        assert not isinstance(failed.value, DirectoryInUse)


@pytest.mark.parametrize("tool", [
    ["rewrite", "{dir}"],
    ["rewrite", "{dir}/appendonlydir"],
    ["fix", "{dir}", "--yes"],
    ["fix", "{dir}/appendonlydir/appendonly.aof.1.incr.aof", "--yes"],
    ["replay", "{other}", "--to-dir", "{dir}"],
])
def test_writing_tools_refuse_a_live_directory(tool, tmp_path):
    """The issue's reproduction: a rewrite under a running server made it lose the
    writes that followed (XLEN 5 after kill -9 and a restart, not 10)."""
    source = tmp_path / "other"
    with Engine(dir=str(source), appendonly=True) as engine:
        engine.execute("XADD", "t", "*", "n", "1")
    with SluiceServer(AOF_ON) as server:
        r = xadd(server, 5)
        before = files_of(server.dir)
        result = sluice_aof(*(arg.format(dir=server.dir, other=source) for arg in tool))
        assert result.returncode == IN_USE, result.stdout + result.stderr
        assert in_use_by(server.proc.pid, server.dir) in result.stderr
        assert files_of(server.dir) == before
        five_more_survive_kill_9(server, r)


def test_an_engine_is_refused_a_live_server_s_directory():
    with SluiceServer(AOF_ON) as server:
        r = xadd(server, 5)
        before = files_of(server.dir)
        for options in ({"appendonly": True}, {}):             # with the AOF, snapshots only
            with pytest.raises(DirectoryInUse, match=in_use_by(server.proc.pid, server.dir)):
                Engine(dir=server.dir, **options)
        assert files_of(server.dir) == before
        five_more_survive_kill_9(server, r)


@pytest.mark.parametrize("intruder", [
    ["server"],
    ["rewrite", "{dir}"],
    ["fix", "{dir}", "--yes"],
    ["replay", "{other}", "--to-dir", "{dir}"],
])
def test_a_live_engine_s_directory_is_refused_to_a_server_and_the_writing_tools(
        intruder, tmp_path):
    """The owner is an embedded engine (this process): the same refusals, naming
    this process, and its writes after them are all there once it is reopened."""
    source, data = tmp_path / "other", tmp_path / "data"
    with Engine(dir=str(source), appendonly=True) as engine:
        engine.execute("XADD", "t", "*", "n", "1")
    engine = Engine(dir=str(data), appendonly=True)
    try:
        for i in range(5):
            engine.execute("XADD", "s", "*", "n", i)
        before = files_of(data)
        if intruder == ["server"]:
            result = run_server(data, tmp_path / "server.log", *AOF_ON)
            assert result.returncode == 1
        else:
            result = sluice_aof(*(arg.format(dir=data, other=source) for arg in intruder))
            assert result.returncode == IN_USE, result.stdout + result.stderr
        assert in_use_by(os.getpid(), data) in result.stderr
        assert files_of(data) == before
        for i in range(5):
            engine.execute("XADD", "s", "*", "n", i)
    finally:
        engine.close()
    with Engine(dir=str(data), appendonly=True) as again:
        assert again.execute("XLEN", "s") == 10


def test_writing_tools_work_once_the_server_is_gone(tmp_path):
    with SluiceServer(AOF_ON, workdir=str(tmp_path)) as server:
        xadd(server, 5)
        server.stop(signal.SIGKILL)
        result = sluice_aof("rewrite", tmp_path)
        assert result.returncode == 0, result.stderr
        server.start()
        assert redis.Redis(port=server.port).xlen("s") == 5


def test_a_lock_file_left_by_a_killed_server_blocks_nobody(tmp_path):
    with SluiceServer(AOF_ON, workdir=str(tmp_path)) as server:
        xadd(server, 5)
        killed = server.proc.pid
        server.stop(signal.SIGKILL)
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(killed)
        server.start()                                  # the lock died with it
        assert redis.Redis(port=server.port).xlen("s") == 5
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(server.proc.pid)


def test_the_lock_outlives_bgsave_and_bgrewriteaof_children():
    with SluiceServer(AOF_ON) as server:
        r = xadd(server, 5)
        assert r.bgsave() is True
        wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
        assert r.execute_command("BGREWRITEAOF") is True
        wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
        info = r.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok" and info["aof_rewrites"] == 1
        assert not children_of(server.proc.pid)          # both children are gone
        result = sluice_aof("rewrite", server.dir)
        assert result.returncode == IN_USE, result.stderr
        assert in_use_by(server.proc.pid, server.dir) in result.stderr


def test_a_forked_child_releasing_does_not_unlock_its_parent(tmp_path):
    lock = DirectoryLock(str(tmp_path)).acquire()
    pid = os.fork()
    if pid == 0:                               # the child: release, then exit
        lock.release()
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    with pytest.raises(DirectoryInUse, match=in_use_by(os.getpid(), tmp_path)):
        DirectoryLock(str(tmp_path)).acquire()
    lock.release()
    DirectoryLock(str(tmp_path)).acquire().release()


def test_a_fork_outliving_its_killed_owner_does_not_keep_the_lock(tmp_path):
    """A child forked by the user (multiprocessing's fork, say) inherits the lock's
    file; it must not keep the directory locked, in the name of a dead process."""
    script = ("import os, signal, sys, time\n"
              "from engine import Engine\n"
              "engine = Engine(dir=sys.argv[1], appendonly=True)\n"
              "child = os.fork()\n"
              "if child == 0:\n"
              "    for fd in (1, 2):\n"                 # let the test read to the end
              "        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)\n"
              "    time.sleep(60)\n"
              "    os._exit(0)\n"
              "print(child, flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    owner = python("-c", script, tmp_path)
    child = int(owner.stdout)
    try:
        assert alive(child)
        with Engine(dir=str(tmp_path), appendonly=True):
            pass
    finally:
        os.kill(child, signal.SIGKILL)


def children_of(pid: int) -> list:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except FileNotFoundError:
        return []


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_rewrite_child_dies_with_its_killed_server():
    """The child's base file is a FIFO nobody reads, so the child hangs in open(),
    inheriting the lock: it must not outlive its parent (keeping the directory
    locked, or writing into it under a new owner)."""
    with SluiceServer(AOF_ON) as server:
        xadd(server, 5)
        aof = os.path.join(server.dir, "appendonlydir")
        with open(os.path.join(aof, "appendonly.aof.manifest"), "rb") as fh:
            manifest = Manifest.parse(fh.read())
        seq = max(f.seq for f in manifest.files()) + 1
        os.mkfifo(os.path.join(aof, f"temp-rewriteaof-{server.proc.pid}-{seq}.tmp"))
        r = redis.Redis(port=server.port)
        assert r.execute_command("BGREWRITEAOF") is True
        wait_for(lambda: children_of(server.proc.pid))
        [child] = children_of(server.proc.pid)
        time.sleep(0.2)
        assert r.info("persistence")["aof_rewrite_in_progress"] == 1   # stuck
        try:
            server.stop(signal.SIGKILL)
            wait_for(lambda: not alive(child), timeout=5)
        finally:
            if alive(child):
                os.kill(child, signal.SIGKILL)
        server.start()
        assert redis.Redis(port=server.port).xlen("s") == 5


def test_read_only_tools_work_on_a_live_directory():
    with SluiceServer(AOF_ON) as server:
        r = xadd(server, 5)
        assert r.save() is True
        for args in (["check", server.dir], ["info", server.dir],
                     ["replay", server.dir, "--to-dir", os.path.join(server.dir, "copy")]):
            result = sluice_aof(*args)
            assert result.returncode == 0, result.stderr
        snapshot_file = os.path.join(server.dir, r.config_get("dbfilename")["dbfilename"])
        for action in ("info", "verify", "dump"):
            result = python("-m", "tools.snapshot_cli", action, snapshot_file)
            assert result.returncode == 0, result.stderr
        assert r.xlen("s") == 5


def test_read_only_tools_read_steadily_while_the_server_rewrites(capsys):
    """A rewrite swaps the manifest and deletes the files the old one named: a reader
    caught in between reads the new set again instead of reporting damage."""
    from tools import aof_cli
    resp_base = [*AOF_ON, "--aof-use-rdb-preamble", "no"]      # replay sends RESP only
    with SluiceServer(resp_base) as server, SluiceServer(["--save", ""]) as copy:
        replay = ["replay", server.dir, "--to-server", f"127.0.0.1:{copy.port}"]
        r = xadd(server, 50)

        def rewrite_30_times() -> None:
            w = redis.Redis(port=server.port)
            started = 0
            while started < 30:
                w.xadd("s", {"n": "x" * 2000})
                try:
                    w.execute_command("BGREWRITEAOF")
                    started += 1
                except redis.ResponseError:
                    pass                              # one is still running
        writer = threading.Thread(target=rewrite_30_times)
        writer.start()
        codes = []
        while writer.is_alive():
            codes += [aof_cli.main([action, server.dir]) for action in ("check", "info")]
            redis.Redis(port=copy.port).flushall()
            codes.append(aof_cli.main(replay))
        writer.join()
        assert r.info("persistence")["aof_rewrites"] >= 29
    assert len(codes) > 20
    assert codes == [0] * len(codes), capsys.readouterr().err


def test_config_set_dir_locks_the_new_directory(tmp_path):
    args = [*AOF_ON, "--enable-protected-configs", "yes"]
    with SluiceServer(args) as owner, SluiceServer(args) as server:
        r = redis.Redis(port=server.port)
        with pytest.raises(redis.ResponseError, match=in_use_by(owner.proc.pid, owner.dir)):
            r.config_set("dir", owner.dir)
        assert r.config_get("dir")["dir"] == server.dir          # the change was undone
        assert r.config_set("dir", str(tmp_path)) is True
        result = sluice_aof("replay", server.dir, "--to-dir", tmp_path)
        assert result.returncode == IN_USE, result.stderr
        assert in_use_by(server.proc.pid, tmp_path) in result.stderr
        assert r.save() is True and set(os.listdir(tmp_path)) - {LOCK_NAME}  # saved there


def test_an_unusable_lock_file_refuses_the_start_with_its_reason(tmp_path):
    os.mkdir(tmp_path / LOCK_NAME)                     # not a file: cannot be opened
    with pytest.raises(PersistError, match=f"cannot lock the data directory {tmp_path}"):
        Engine(dir=str(tmp_path))
    log = tmp_path / "server.log"
    server = run_server(tmp_path, log)
    assert server.returncode == 1 and "Traceback" not in server.stderr
    assert "cannot lock the data directory" in log.read_text()
