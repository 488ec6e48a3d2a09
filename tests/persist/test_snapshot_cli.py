"""sluice-snapshot as a user runs it: a subprocess, its output and exit codes."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from engine import Engine, ManualClock
from engine_states import T0, random_engine
from persist import snapshot
from servers import ROOT

REPO = str(ROOT)
SCRIPT = os.path.join(os.path.dirname(sys.executable), "sluice-snapshot")
COMMAND = [SCRIPT] if os.path.exists(SCRIPT) else [sys.executable, "-m", "tools.snapshot_cli"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


@pytest.fixture
def snap(tmp_path):
    engine = Engine(clock=ManualClock(T0))
    engine.execute(b"SET", b"text", b"caf\xc3\xa9", b"PX", 1000)
    engine.execute(b"SET", b"\xff\xfe", b"\x00\x80binary")
    engine.execute(b"XADD", b"s", b"1-1", b"f", b"v", b"\xff", b"")
    engine.execute(b"XADD", b"s", b"2-0", b"f", b"w", b"\xff", b"x")
    engine.execute(b"XGROUP", b"CREATE", b"s", b"g", b"0")
    engine.execute(b"XREADGROUP", b"GROUP", b"g", b"alice", b"COUNT", 1, b"STREAMS", b"s", b">")
    path = tmp_path / "dump.sluice"
    snapshot.write_snapshot(engine, path)
    return path


def test_info(snap):
    done = run("info", snap)
    assert done.returncode == 0, done.stderr
    assert "format version:  1" in done.stdout
    assert "keys:            3 (1 streams)" in done.stdout
    assert "stream entries:  2" in done.stdout and "pending entries: 1" in done.stdout
    info = json.loads(run("info", "--json", snap).stdout)
    assert info["keys"] == 3 and info["file_bytes"] == os.path.getsize(snap)


def test_verify_ok_and_damaged(snap, tmp_path):
    done = run("verify", snap)
    assert done.returncode == 0 and "OK" in done.stdout and done.stderr == ""
    data = bytearray(snap.read_bytes())
    data[-3] ^= 0x10
    bad = tmp_path / "bad.snap"
    bad.write_bytes(data)
    done = run("verify", bad)
    assert done.returncode == 1
    assert str(bad) in done.stderr and "at offset 12" in done.stderr
    bad.write_bytes(snap.read_bytes()[:-5])
    done = run("verify", bad)
    assert done.returncode == 1 and "offset 12" in done.stderr


def test_dump_json_lines(snap, tmp_path):
    done = run("dump", snap)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["type"] == "db" and records[-1]["type"] == "end"
    keys = {}          # each key's records (keys come in the keyspace's table order)
    for r in records[1:-1]:
        if "key" in r:
            keys[json.dumps(r["key"])] = block = []
        block.append(r)
    binary = json.dumps({"base64": base64.b64encode(b"\xff\xfe").decode()})
    assert sorted(keys) == sorted(['"text"', binary, '"s"'])
    assert keys['"text"'] == [{"type": "string", "key": "text", "value": "caf\u00e9",
                               "expire_ms": T0 + 1000}]
    assert [r["type"] for r in keys[binary]] == ["string"]
    assert base64.b64decode(keys[binary][0]["value"]["base64"]) == b"\x00\x80binary"
    stream = keys['"s"']
    assert [r["type"] for r in stream] == ["stream", "entries", "group", "pending"]
    assert stream[1]["entries"] == [["1-1", ["f", "v", {"base64": "/w=="}, ""]],
                                    ["2-0", ["f", "w", {"base64": "/w=="}, "x"]]]
    assert stream[3]["entries"] == [{"id": "1-1", "consumer": "alice",
                                     "delivery_time": T0, "delivery_count": 1}]
    out = tmp_path / "out.jsonl"
    assert run("dump", snap, "-o", out).returncode == 0
    assert out.read_text() == done.stdout


def test_progress_bar_only_when_asked(tmp_path):
    path = tmp_path / "big.snap"
    snapshot.write_snapshot(random_engine(1, 300), path)
    quiet = run("verify", path)
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = run("verify", "--progress", path)
    assert loud.returncode == 0 and "B/s" in loud.stderr


def test_usage_and_unreadable_files(snap, tmp_path):
    assert run().returncode == 2
    assert run("frobnicate", snap).returncode == 2
    assert run("info").returncode == 2
    missing = run("verify", tmp_path / "missing.snap")
    assert missing.returncode == 2 and "No such file" in missing.stderr
    other = tmp_path / "dump.rdb"
    other.write_bytes(b"REDIS0010" + b"\x00" * 40)
    done = run("info", other)
    assert done.returncode == 1 and "not a Sluice snapshot" in done.stderr


def rdb_named(path, tool: str, expected: str) -> str:
    """The first sentence a tool must print for a Redis RDB file, the version read
    from the file's signature (REDIS and four digits)."""
    version = int(path.read_bytes()[5:9])
    return (f"{tool}: {path} is a Redis RDB file (RDB version {version}), not {expected}; "
            "Sluice does not read RDB: ")


@pytest.mark.parametrize("command", ["info", "verify", "dump"])
def test_a_redis_rdb_file_is_named_not_called_damaged(redis_data_dir, command):
    rdb = redis_data_dir / "dump.rdb"
    assert rdb.read_bytes().startswith(b"REDIS00")
    done = run(command, rdb)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(rdb_named(rdb, "sluice-snapshot", "a Sluice snapshot"))
    assert "damaged" not in done.stderr and "offset" not in done.stderr


def test_files_are_told_by_magic_not_by_name(snap, tmp_path):
    named_rdb = tmp_path / "dump.rdb"           # what earlier versions named our snapshot
    named_rdb.write_bytes(snap.read_bytes())
    assert named_rdb.read_bytes()[:12] == snapshot.HEADER.pack(snapshot.MAGIC, 1)
    assert run("verify", named_rdb).returncode == 0
    resp = tmp_path / "commands.sluice"
    resp.write_bytes(b"*1\r\n$4\r\nPING\r\n")
    done = run("info", resp)
    assert done.returncode == 1
    assert f"damaged: {resp}: not a Sluice snapshot (bad magic) at offset 0" in done.stderr
