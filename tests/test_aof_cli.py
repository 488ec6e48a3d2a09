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
from engine.server.testing import ROOT
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
