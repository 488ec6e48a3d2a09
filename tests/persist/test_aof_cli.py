"""sluice-aof as a real subprocess on real directories: check, fix, info, replay (into a
new directory and into a running redis-server over RESP) and rewrite; exit codes."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import redis

from engine import Engine, ManualClock
from servers import ROOT
from engine_states import logged_state, mixed_workload
from persist.manifest import Manifest

T0 = 1_700_000_000_000


def sluice_aof(*args, stdin=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tools.aof_cli", *map(str, args)],
                          capture_output=True, text=True, env=env, input=stdin, cwd=ROOT)


@pytest.fixture
def data_dir(tmp_path):
    import random
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path), appendonly=True, appendfsync="no",
                    aof_use_rdb_preamble=False)
    mixed_workload(engine, clock, random.Random(1), 500)
    engine.close(save=False)
    return tmp_path


def incr_path(data_dir) -> str:
    aof = os.path.join(data_dir, "appendonlydir")
    return os.path.join(aof, sorted(n for n in os.listdir(aof) if n.endswith(".incr.aof"))[-1])


def loaded(path):
    # Loaded under a later clock: XCLAIM ... TIME in the future of "now" is clamped.
    engine = Engine(clock=ManualClock(T0 + 10 ** 8), dir=str(path), appendonly=True)
    state = logged_state(engine, layout=False)
    engine.close(save=False)
    return state


def test_check_and_fix_a_cut_off_tail(data_dir):
    assert sluice_aof("check", data_dir).returncode == 0
    path = incr_path(data_dir)
    size = os.path.getsize(path)
    with open(path, "ab") as fh:
        fh.write(b"*3\r\n$3\r\nSET\r\n$1\r\nk")
    check = sluice_aof("check", data_dir / "appendonlydir")
    assert check.returncode == 1
    assert f"at offset {size}" in check.stderr and "sluice-aof fix" in check.stderr
    refused = sluice_aof("fix", data_dir, stdin="n\n")
    assert refused.returncode == 1 and os.path.getsize(path) > size
    fixed = sluice_aof("fix", data_dir, "--yes")
    assert fixed.returncode == 0 and os.path.getsize(path) == size
    assert sluice_aof("check", path).returncode == 0


def test_fix_refuses_damage_before_the_last_file(data_dir):
    engine = Engine(clock=ManualClock(T0), dir=str(data_dir), appendonly=True)
    engine.execute("BGREWRITEAOF")
    engine.execute("SET", "after", "1")
    engine.close(save=False)
    base = [n for n in os.listdir(data_dir / "appendonlydir") if ".base." in n][0]
    with open(data_dir / "appendonlydir" / base, "r+b") as fh:
        fh.seek(0)
        fh.write(b"!")
    result = sluice_aof("fix", data_dir, "--yes")
    assert result.returncode == 1 and "earlier file" in result.stderr


def test_info_counts_commands_and_keys(data_dir):
    result = sluice_aof("info", data_dir)
    assert result.returncode == 0
    assert "XADD" in result.stdout and "XCLAIM" in result.stdout
    assert "s1" in result.stdout and "total:" in result.stdout


def test_replay_into_a_new_directory(data_dir, tmp_path_factory):
    target = tmp_path_factory.mktemp("replayed")
    result = sluice_aof("replay", data_dir, "--to-dir", target)
    assert result.returncode == 0, result.stderr
    assert loaded(target) == loaded(data_dir)


def test_replay_into_a_running_redis_server(data_dir, redis_server):
    host, port = redis_server
    r = redis.Redis(host=host, port=port)
    r.flushall()
    result = sluice_aof("replay", data_dir, "--to-server", f"{host}:{port}")
    assert result.returncode == 0, result.stdout + result.stderr
    engine = Engine(clock=ManualClock(T0), dir=str(data_dir), appendonly=True)
    for key in (b"s1", b"s2"):
        assert r.xrange(key) == [(i, dict(zip(f[::2], f[1::2])))
                                 for i, f in engine.execute("XRANGE", key, "-", "+")]
        assert r.xpending(key, "g1")["pending"] == engine.execute("XPENDING", key, "g1")[0]
    engine.close(save=False)
    r.flushall()


def test_rewrite_compacts_in_place(data_dir):
    before = loaded(data_dir)
    aof = data_dir / "appendonlydir"
    size = sum(os.path.getsize(aof / n) for n in os.listdir(aof))
    result = sluice_aof("rewrite", data_dir)
    assert result.returncode == 0, result.stderr
    assert sum(os.path.getsize(aof / n) for n in os.listdir(aof)) < size
    assert any(n.endswith(".base.sluice") for n in os.listdir(aof))
    assert loaded(data_dir) == before


@pytest.mark.parametrize("action", ["check", "info"])
def test_redis_rdb_files_are_named_not_called_damaged(redis_data_dir, action):
    rdb = redis_data_dir / "dump.rdb"
    done = sluice_aof(action, rdb)
    assert done.returncode == 1 and "damaged" not in done.stderr
    assert done.stderr.startswith(f"sluice-aof: {rdb} is a Redis RDB file (RDB version "
                                  f"{int(rdb.read_bytes()[5:9])}), not an AOF file; Sluice "
                                  "does not read RDB: ")
    # redis-server's own appendonlydir with aof-use-rdb-preamble yes: its base is RDB
    aof = redis_data_dir / "appendonlydir"
    base = aof / Manifest.parse((aof / "appendonly.aof.manifest").read_bytes()).base.name
    assert base.name.endswith(".base.rdb")
    done = sluice_aof(action, redis_data_dir)
    assert done.returncode == 1 and "damaged" not in done.stderr
    assert done.stderr.startswith(f"sluice-aof: {base} is a Redis RDB file (RDB version "
                                  f"{int(base.read_bytes()[5:9])}), not a Sluice snapshot or "
                                  "RESP commands; ")


def test_usage_errors_exit_2(tmp_path):
    assert sluice_aof().returncode == 2
    assert sluice_aof("explode", tmp_path).returncode == 2
    assert sluice_aof("replay", tmp_path).returncode == 2          # needs a destination
    missing = sluice_aof("check", tmp_path)                          # no manifest there
    assert missing.returncode == 1 and "no AOF manifest" in missing.stderr


def test_console_script_is_installed():
    """`make test` installs the package, so the console script must be there."""
    script = shutil.which("sluice-aof", path=os.path.dirname(sys.executable))
    assert script is not None, "sluice-aof is not installed: run `make build`"
    assert subprocess.run([script, "--help"], capture_output=True).returncode == 0


HALF_A_COMMAND = b"*3\r\n$3\r\nSET\r\n$1\r\nk"


def cut_tail(data_dir) -> tuple:
    """Appends half a command to the last incremental file: (path, size before)."""
    path = incr_path(data_dir)
    size = os.path.getsize(path)
    with open(path, "ab") as fh:
        fh.write(HALF_A_COMMAND)
    return path, size


def test_fix_without_a_terminal_refuses_and_says_to_pass_yes(data_dir):
    path, size = cut_tail(data_dir)
    with open(os.devnull) as devnull:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        result = subprocess.run([sys.executable, "-m", "tools.aof_cli", "fix", str(data_dir)],
                                stdin=devnull, capture_output=True, text=True, env=env,
                                cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "--yes" in result.stderr
    assert os.path.getsize(path) == size + len(HALF_A_COMMAND)                       # nothing truncated


def test_check_and_info_read_a_snapshot_base_file(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=True)
    engine.execute("XADD", "s", "*", "f", "v")
    engine.execute("BGREWRITEAOF")
    engine.close(save=False)
    aof = tmp_path / "appendonlydir"
    [base] = [n for n in os.listdir(aof) if ".base." in n]
    check = sluice_aof("check", aof / base)
    assert check.returncode == 0 and "valid" in check.stdout, check.stderr
    info = sluice_aof("info", aof / base)
    assert info.returncode == 0 and "snapshot base" in info.stdout, info.stderr
    replayed = tmp_path / "replayed"
    assert sluice_aof("replay", aof / base, "--to-dir", replayed).returncode == 0
    assert loaded(replayed) == loaded(tmp_path)


def test_replay_to_dir_loads_a_cut_tail_as_the_server_does(data_dir, tmp_path_factory):
    before = loaded(data_dir)                   # the state the whole commands hold
    path, size = cut_tail(data_dir)
    target = tmp_path_factory.mktemp("replayed")
    result = sluice_aof("replay", data_dir, "--to-dir", target)
    assert result.returncode == 0, result.stderr
    assert f"offset {size}" in result.stderr and "aof-load-truncated" in result.stderr
    assert os.path.getsize(path) == size + len(HALF_A_COMMAND)                       # the source untouched
    assert loaded(target) == before


def test_replay_refuses_damage_the_server_refuses_with_check_s_hint(data_dir, tmp_path):
    path = incr_path(data_dir)
    with open(path, "r+b") as fh:                # damage in the middle, not a cut tail
        fh.seek(os.path.getsize(path) // 2)
        fh.write(b"\r\n!!garbage!!\r\n")
    check = sluice_aof("check", data_dir)
    replay = sluice_aof("replay", data_dir, "--to-dir", tmp_path / "replayed")
    assert check.returncode == replay.returncode == 1
    assert replay.stderr == check.stderr and "sluice-aof fix" in check.stderr
    assert not (tmp_path / "replayed").exists()                # nothing left behind


def test_info_counts_keys_at_their_real_positions(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False)
    engine.execute("XGROUP", "CREATE", "orders", "g1", "$", "MKSTREAM")
    engine.execute("XGROUP", "CREATECONSUMER", "orders", "g1", "c1")
    engine.execute("XGROUP", "SETID", "orders", "g1", "0")
    engine.execute("XADD", "orders", "*", "f", "v")
    engine.execute("DEL", "a", "b")
    engine.close(save=False)
    result = sluice_aof("info", tmp_path)
    assert result.returncode == 0, result.stderr
    keys = result.stdout.split("keys (most written):\n")[1].split()
    assert dict(zip(keys[::2], map(int, keys[1::2])))["orders"] == 4
    assert not {"CREATE", "CREATECONSUMER", "SETID", "create", "setid"} & set(keys)


@pytest.mark.parametrize("action", [[], ["check"], ["fix"], ["info"], ["replay"], ["rewrite"]])
def test_help_says_what_path_may_be_and_the_exit_codes(action):
    result = sluice_aof(*action, "--help")
    assert result.returncode == 0
    for words in ("a data directory", "an appendonlydir", "a manifest", "a single file",
                  "Exit codes", "0  fine", "1  damaged", "2  usage error", "3  the data"):
        assert words in result.stdout, words
