"""The snapshot's own name and magic (it is not RDB): what SAVE and an AOF rewrite
write, a `dbfilename` set explicitly, directories written by earlier versions
(the snapshot named dump.rdb, the AOF base .base.snap), and Redis's RDB files,
which Sluice names and refuses rather than load."""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys

import pytest
import redis

from engine import Engine
from servers import ROOT, SluiceServer
from persist import snapshot
from persist.directory_lock import LOCK_NAME
from persist.errors import ForeignFileError
from persist.files import write_atomically
from persist.manifest import Manifest

HEADER = snapshot.HEADER.pack(snapshot.MAGIC, snapshot.FORMAT_VERSION)


def test_save_writes_dump_sluice_starting_with_the_magic():
    with SluiceServer(["--save", ""]) as server:
        r = redis.Redis(port=server.port)
        assert r.config_get("dbfilename") == {"dbfilename": "dump.sluice"}
        r.xadd("s", {"f": "v"}, id="1-1")
        assert r.save() is True
        assert sorted(os.listdir(server.dir)) == ["dump.sluice", LOCK_NAME, "sluice.log"]
        with open(os.path.join(server.dir, "dump.sluice"), "rb") as f:
            assert f.read(len(HEADER)) == HEADER == b"\x89SLUICE\n\x01\x00\x00\x00"


@pytest.mark.parametrize("name", ["dump.rdb", "state.bin"])
def test_a_dbfilename_set_explicitly_is_written_in_our_format(name):
    with SluiceServer(["--save", "", "--dbfilename", name]) as server:
        r = redis.Redis(port=server.port)
        assert r.config_get("dbfilename") == {"dbfilename": name}
        r.xadd("s", {"f": "v"}, id="1-1")
        assert r.save() is True
        assert not os.path.exists(os.path.join(server.dir, "dump.sluice"))
        with open(os.path.join(server.dir, name), "rb") as f:
            assert f.read(len(HEADER)) == HEADER
        server.stop()
        server.start()
        assert redis.Redis(port=server.port).xlen("s") == 1


def test_a_snapshot_an_earlier_version_named_dump_rdb_loads_and_is_renamed(tmp_path):
    """Earlier versions wrote this very format under the default name dump.rdb."""
    engine = Engine()
    engine.execute("XADD", "s", "1-1", "f", "v")
    snapshot.write_snapshot(engine, tmp_path / "dump.rdb")
    with SluiceServer(["--save", ""], workdir=str(tmp_path)) as server:
        r = redis.Redis(port=server.port)
        assert r.xrange("s") == [(b"1-1", {b"f": b"v"})]
        assert not os.path.exists(tmp_path / "dump.rdb")
        assert (tmp_path / "dump.sluice").read_bytes()[:len(HEADER)] == HEADER
        assert "Renamed dump.rdb to dump.sluice" in server.log_text()
        r.xadd("s", {"f": "w"}, id="2-1")
        r.save()
        server.stop()
        server.start()
        assert redis.Redis(port=server.port).xlen("s") == 2
        assert not os.path.exists(tmp_path / "dump.rdb")


def test_an_aof_base_an_earlier_version_named_base_snap_loads(tmp_path):
    with Engine(dir=str(tmp_path), appendonly=True) as engine:
        engine.execute("XADD", "s", "1-1", "f", "v")
        engine.execute("BGREWRITEAOF")
        engine.execute("XADD", "s", "2-1", "f", "w")
    aof = tmp_path / "appendonlydir"
    manifest_path = aof / "appendonly.aof.manifest"
    manifest = Manifest.parse(manifest_path.read_bytes())
    assert manifest.base.name == "appendonly.aof.2.base.sluice"
    assert (aof / manifest.base.name).read_bytes()[:len(HEADER)] == HEADER
    # the layout of earlier versions: the same file under the name .base.snap
    old_name = "appendonly.aof.2.base.snap"
    os.rename(aof / manifest.base.name, aof / old_name)
    manifest.base.name = old_name
    write_atomically(str(manifest_path), manifest.render())
    check = subprocess.run([sys.executable, "-m", "tools.aof_cli", "check", str(tmp_path)],
                           capture_output=True, text=True, cwd=ROOT,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert check.returncode == 0 and "AOF is valid (2 file(s))" in check.stdout, check.stderr
    with Engine(dir=str(tmp_path), appendonly=True) as engine:
        assert engine.execute("XLEN", "s") == 2
        engine.execute("BGREWRITEAOF")
    assert sorted(n for n in os.listdir(aof) if ".base." in n) == ["appendonly.aof.3.base.sluice"]
    with Engine(dir=str(tmp_path), appendonly=True) as engine:
        assert engine.execute("XLEN", "s") == 2


def test_a_redis_dump_rdb_under_the_default_name_is_left_alone(redis_data_dir, tmp_path,
                                                               caplog):
    rdb = redis_data_dir / "dump.rdb"
    before = rdb.read_bytes()
    with caplog.at_level(logging.WARNING, logger="sluice"):
        with Engine(dir=str(redis_data_dir)) as engine:
            assert engine.execute("DBSIZE") == 0
    assert rdb.read_bytes() == before
    assert f"{rdb} is a Redis RDB file (RDB version {int(before[5:9])}), not a Sluice " \
           "snapshot; Sluice does not read RDB: " in caplog.text
    other = tmp_path / "other" / "dump.rdb"
    other.parent.mkdir()
    other.write_bytes(b"neither")
    with caplog.at_level(logging.WARNING, logger="sluice"):
        Engine(dir=str(other.parent)).close()
    assert other.read_bytes() == b"neither"
    assert f"{other} is neither a Sluice snapshot nor a Redis RDB file" in caplog.text


def test_a_redis_dump_rdb_set_as_dbfilename_stops_the_start(redis_data_dir, tmp_path):
    rdb = redis_data_dir / "dump.rdb"
    shutil.copy(rdb, tmp_path / "dump.rdb")
    server = SluiceServer(["--save", "", "--dbfilename", "dump.rdb"], workdir=str(tmp_path))
    with pytest.raises(RuntimeError, match="did not start"):
        server.start()
    assert server.returncode == 1
    assert (f"Could not load the data directory: {tmp_path / 'dump.rdb'} is a Redis RDB file "
            f"(RDB version {int(rdb.read_bytes()[5:9])}), not a Sluice snapshot; "
            in server.log_text())


def test_a_redis_aof_with_an_rdb_base_is_refused_and_the_readme_way_works(redis_data_dir):
    with pytest.raises(ForeignFileError) as info:
        Engine(dir=str(redis_data_dir), appendonly=True)
    assert ".base.rdb is a Redis RDB file (RDB version " in str(info.value)
    assert "not a Sluice snapshot or RESP commands; Sluice does not read RDB: to move data " \
           "from Redis, load an AOF that redis-server wrote with aof-use-rdb-preamble no" \
           in str(info.value)
    # The README's way: the AOF that redis-server rewrote with aof-use-rdb-preamble no.
    with Engine(dir=str(redis_data_dir / "resp"), appendonly=True) as engine:
        assert engine.execute("XRANGE", "s", "-", "+") == [[b"1-1", [b"f", b"v"]]]
