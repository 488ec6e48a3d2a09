"""The append-only file on a real file system: the RESP log format, the manifest, the
persistent embedded engine (Engine(dir=...)) with each fsync policy, transactions,
recovery from a cut-off tail, refusal of damage, and rewrites."""
import os
import random

import pytest

from engine import Engine, ManualClock, ResponseError
from engine.api.client import EmbeddedRedis
from engine_states import logged_state, mixed_workload
from persist.errors import CorruptFileError, TruncatedFileError
from persist.manifest import AofFile, Manifest
from persist.resp_log import CommandReader, LogBuffer

T0 = 1_700_000_000_000
HOUR = 3_600_000


def aof_dir(path):
    return os.path.join(path, "appendonlydir")


def manifest_of(path) -> Manifest:
    with open(os.path.join(aof_dir(path), "appendonly.aof.manifest"), "rb") as fh:
        return Manifest.parse(fh.read())


def last_incr(path) -> str:
    return os.path.join(aof_dir(path), manifest_of(path).incrs[-1].name)


def reopen(path, clock, **options):
    return Engine(clock=clock, dir=str(path), appendonly=True, **options)


# -- the byte format -------------------------------------------------------------------

def random_commands(rng, n):
    return [[bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))
             for _ in range(rng.randrange(1, 6))] for _ in range(n)]


def test_log_buffer_round_trips_binary_commands_with_selects():
    rng = random.Random(1)
    buf = LogBuffer()
    expected = []
    for db in (0, 0, 3, 3, 0):
        cmds = random_commands(rng, 5)
        buf.append_effects(db, cmds)
        if not expected or expected[-1][0] != db:
            expected.append((db, [[b"SELECT", str(db).encode()]]))
        expected[-1][1].extend(cmds)
    data = buf.take()
    assert len(buf) == 0
    flat = [cmd for _, cmds in expected for cmd in cmds]
    reader = CommandReader(data, "mem")
    assert list(reader) == flat
    assert reader.offset == len(data)


def test_every_cut_is_a_truncation_at_the_last_whole_command():
    rng = random.Random(2)
    buf = LogBuffer()
    ends = [0]
    for cmd in random_commands(rng, 30):
        buf.append_command(cmd)
        ends.append(len(buf))
    data = buf.take()
    for cut in range(len(data) + 1):
        reader = CommandReader(data[:cut], "f.aof")
        if cut in ends:
            assert len(list(reader)) == ends.index(cut)
            continue
        with pytest.raises(TruncatedFileError) as info:
            list(reader)
        assert info.value.offset == max(e for e in ends if e <= cut)
        assert info.value.path == "f.aof"


@pytest.mark.parametrize("damaged", [
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\nGARBAGE\r\n",      # not a bulk string
    b"*1\r\n$3\r\nSETX\r\n",                             # bulk longer than declared
    b"*x\r\n",                                           # not a number
    b"*0\r\n",                                           # empty command
    b"*1\r\n$3\rXSET\r\n",                               # broken CRLF
])
def test_damage_is_corruption_with_the_offset_of_the_last_good_command(damaged):
    good = b"*1\r\n$4\r\nPING\r\n"
    reader = CommandReader(good + damaged, "f.aof")
    with pytest.raises(CorruptFileError) as info:
        list(reader)
    assert not isinstance(info.value, TruncatedFileError)
    assert info.value.offset == len(good)


def test_annotation_lines_are_skipped():
    data = b"#TS:1700000000\r\n*1\r\n$4\r\nPING\r\n#TS:1700000001\r\n"
    assert list(CommandReader(data, "f")) == [[b"PING"]]


# -- the manifest ----------------------------------------------------------------------

def test_manifest_round_trip_with_odd_names():
    m = Manifest(base=AofFile("appendonly.aof.3.base.sluice", 3, "b"),
                 incrs=[AofFile("with space.4.incr.aof", 4, "i"),
                        AofFile('q"uote\\\x01.5.incr.aof', 5, "i")],
                 history=[AofFile("old.2.incr.aof", 2, "h")])
    text = m.render()
    assert text.startswith(b"file appendonly.aof.3.base.sluice seq 3 type b\n")
    assert Manifest.parse(text) == m


@pytest.mark.parametrize("text,reason", [
    (b"file a seq 1 type b\nfile b seq 2 type b\n", "two base"),
    (b"file a seq 2 type i\nfile b seq 1 type i\n", "not increasing"),
    (b"file a seq 1 type x\n", "invalid"),
    (b"file a seq one type i\n", "invalid"),
    (b"file a seq 1\n", "invalid"),
    (b'file "a seq 1 type i\n', "invalid"),
    (b"file ../etc/passwd seq 1 type i\n", "invalid"),
    (b"file a seq 1 type i", "newline"),
])
def test_manifest_errors_name_the_offset(text, reason):
    with pytest.raises(CorruptFileError) as info:
        Manifest.parse(b"# comment\n" + text, "m")
    assert reason in info.value.reason
    assert info.value.offset >= len(b"# comment\n")


# -- the persistent engine -------------------------------------------------------------

@pytest.mark.parametrize("policy", ["always", "everysec", "no"])
@pytest.mark.parametrize("preamble", [True, False])
def test_reload_reproduces_the_state(tmp_path, policy, preamble):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync=policy, aof_use_rdb_preamble=preamble)
    mixed_workload(engine, clock, random.Random(7), 800)
    engine.execute("SELECT", 5)
    engine.execute("SET", "other-db", "v")
    engine.select(0)
    before = logged_state(engine)
    engine.close()
    again = reopen(tmp_path, ManualClock(clock.now_ms() + HOUR),
                   aof_use_rdb_preamble=preamble)
    assert logged_state(again) == before
    again.close()


def test_always_puts_each_write_on_disk_before_returning(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    engine.execute("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    for i in range(20):
        engine.execute("XADD", "s", "*", "i", i)
        if i % 3 == 0:
            engine.execute("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "s", ">")
        # A second engine loading the directory now sees exactly this state.
        probe_dir = tmp_path / f"copy{i}"
        os.makedirs(probe_dir / "appendonlydir")
        for name in os.listdir(aof_dir(tmp_path)):
            with open(os.path.join(aof_dir(tmp_path), name), "rb") as src:
                (probe_dir / "appendonlydir" / name).write_bytes(src.read())
        copy = reopen(probe_dir, ManualClock(clock.now_ms()), appendfsync="no")
        assert logged_state(copy) == logged_state(engine)
        copy.close()
    engine.close()


def test_writes_are_logged_as_effects_not_as_sent(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    engine.execute("XADD", "s", "*", "f", "v")
    engine.execute("SET", "k", "v", "EX", 10)
    engine.execute("EXPIRE", "s", 100)
    engine.execute("XGROUP", "CREATE", "s", "g", "0")
    engine.execute("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    with open(last_incr(tmp_path), "rb") as fh:
        logged = list(CommandReader(fh.read(), "incr"))
    engine.close()
    assert [b"XADD", b"s", f"{T0}-0".encode(), b"f", b"v"] in logged
    assert [b"SET", b"k", b"v", b"PXAT", str(T0 + 10_000).encode()] in logged
    assert [b"PEXPIREAT", b"s", str(T0 + 100_000).encode()] in logged
    claim = [c for c in logged if c[0] == b"XCLAIM"]
    assert claim == [[b"XCLAIM", b"s", b"g", b"alice", b"0", f"{T0}-0".encode(), b"TIME",
                      str(T0).encode(), b"RETRYCOUNT", b"1", b"FORCE", b"JUSTID",
                      b"LASTID", f"{T0}-0".encode()]]


def test_nothing_expires_while_loading(tmp_path):
    """A key given a TTL and later PERSISTed must survive a reload after the TTL
    would have passed; a key whose TTL did pass is gone after the load."""
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock)
    engine.execute("SET", "kept", "v", "PX", 100)
    engine.execute("PERSIST", "kept")
    engine.execute("SET", "gone", "v", "PX", 100)
    engine.execute("XADD", "s", "1-1", "f", "v")
    engine.execute("PEXPIRE", "s", 50)
    engine.execute("XADD", "s", "2-1", "f", "v")
    engine.close()
    again = reopen(tmp_path, ManualClock(T0 + HOUR))
    assert again.execute("GET", "kept") == b"v"
    assert again.execute("TTL", "kept") == -1
    assert again.execute("GET", "gone") is None
    assert again.execute("EXISTS", "s") == 0
    again.close()


def test_transactions_are_logged_whole_and_replayed_whole(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    client = EmbeddedRedis(engine=engine)
    client.set("before", "1")
    pipe = client.pipeline(transaction=True)
    pipe.xadd("s", {"f": "v"}, id="1-1")
    pipe.set("t1", "x")
    pipe.incr("n")
    pipe.execute()
    path = last_incr(tmp_path)
    with open(path, "rb") as fh:
        data = fh.read()
    names = [c[0] for c in CommandReader(data, path)]
    assert names.count(b"MULTI") == 1 and names.count(b"EXEC") == 1
    assert names.index(b"MULTI") < names.index(b"XADD") < names.index(b"EXEC")
    engine.close()
    # Cut inside the transaction: it goes as a whole, the file ends before MULTI.
    multi_at = data.index(b"*1\r\n$5\r\nMULTI\r\n")
    exec_at = data.index(b"*1\r\n$4\r\nEXEC\r\n")
    with open(path, "r+b") as fh:
        fh.truncate(exec_at + 3)
    again = reopen(tmp_path, ManualClock(T0))
    assert again.execute("GET", "before") == b"1"
    assert again.execute("EXISTS", "s", "t1", "n") == 0
    again.close()
    assert os.path.getsize(path) == multi_at


def test_cut_off_tail_is_dropped_and_the_file_truncated(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    for i in range(10):
        engine.execute("XADD", "s", f"{i + 1}-0", "f", "v" * i)
    engine.close()
    path = last_incr(tmp_path)
    size = os.path.getsize(path)
    with open(path, "ab") as fh:
        fh.write(b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$4\r\n11-0")      # a write cut short
    with pytest.raises(CorruptFileError) as info:
        reopen(tmp_path, clock, aof_load_truncated=False)
    assert info.value.path == path and info.value.offset == size
    assert "sluice-aof fix" in str(info.value)
    again = reopen(tmp_path, clock)
    assert again.execute("XLEN", "s") == 10
    assert os.path.getsize(path) == size
    again.execute("XADD", "s", "12-0", "f", "v")        # appends after the cut
    again.close()
    last = reopen(tmp_path, clock)
    assert last.execute("XRANGE", "s", "-", "+")[-1][0] == b"12-0"
    last.close()


def test_damage_before_the_end_refuses_to_load(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    for i in range(10):
        engine.execute("SET", f"k{i}", "v")
    engine.close()
    path = last_incr(tmp_path)
    data = bytearray(open(path, "rb").read())
    where = data.index(b"*3\r\n$3\r\nSET\r\n$2\r\nk5")
    data[where] = ord("?")
    open(path, "wb").write(bytes(data))
    for truncated in (True, False):
        with pytest.raises(CorruptFileError) as info:
            reopen(tmp_path, clock, aof_load_truncated=truncated)
        assert info.value.path == path and info.value.offset == where
    assert os.path.getsize(path) == len(data)         # nothing was cut


def test_an_early_end_in_a_file_that_is_not_the_last_refuses(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock)
    engine.execute("SET", "a", "1")
    engine.execute("BGREWRITEAOF")                   # base 2, incr 2 ...
    engine.execute("SET", "b", "2")
    engine.close()
    m = manifest_of(tmp_path)
    first = os.path.join(aof_dir(tmp_path), m.incrs[0].name)
    with open(first, "ab") as fh:
        fh.write(b"*2\r\n$3\r\nDEL")
    m.incrs.append(AofFile("appendonly.aof.9.incr.aof", 9, "i"))
    open(os.path.join(aof_dir(tmp_path), "appendonly.aof.9.incr.aof"), "wb").close()
    with open(os.path.join(aof_dir(tmp_path), "appendonly.aof.manifest"), "wb") as fh:
        fh.write(m.render())
    with pytest.raises(CorruptFileError) as info:
        reopen(tmp_path, clock)
    assert info.value.path == first


@pytest.mark.parametrize("preamble", [True, False])
def test_rewrite_compacts_and_keeps_state(tmp_path, preamble):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, aof_use_rdb_preamble=preamble)
    mixed_workload(engine, clock, random.Random(3), 600)
    first = manifest_of(tmp_path)
    assert engine.execute("BGREWRITEAOF") == b"Background append only file rewriting started"
    second = manifest_of(tmp_path)
    assert second.base.seq == first.base.seq + 1
    assert second.base.name.endswith(".sluice" if preamble else ".aof")
    assert [f.seq for f in second.incrs] == [first.incrs[-1].seq + 1]
    assert not second.history
    assert sorted(os.listdir(aof_dir(tmp_path))) == sorted(
        [second.base.name, second.incrs[0].name, "appendonly.aof.manifest"])
    mixed_workload(engine, clock, random.Random(4), 200)
    before = logged_state(engine, layout=False)
    engine.close()
    again = reopen(tmp_path, ManualClock(clock.now_ms() + HOUR))
    assert logged_state(again, layout=False) == before
    again.close()


def test_a_rewrite_interrupted_before_the_swap_loses_nothing(tmp_path):
    """The state between begin_rewrite and finish_rewrite (what a crash mid-rewrite
    leaves): the manifest names the old base, the old increments and the new one."""
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    mixed_workload(engine, clock, random.Random(5), 300)
    job = engine.durability.aof.begin_rewrite()
    with open(job.temp_path, "wb") as fh:
        fh.write(b"half a base")                      # the child died here
    mixed_workload(engine, clock, random.Random(6), 300)
    before = logged_state(engine)
    engine.durability.aof.flush(sync=True)
    engine.durability.dir_lock.release()       # a crash: the kernel drops the lock
    again = reopen(tmp_path, ManualClock(clock.now_ms()))   # no close()
    assert logged_state(again) == before
    assert not [n for n in os.listdir(aof_dir(tmp_path)) if n.startswith("temp-")]
    again.close()


def test_snapshot_without_aof(tmp_path):
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path))
    mixed_workload(engine, clock, random.Random(8), 300)
    assert engine.execute("SAVE") == b"OK"
    assert engine.execute("LASTSAVE") > 0
    before = logged_state(engine)
    engine.execute("XADD", "s1", "*", "lost", "1")       # after the save: not kept
    engine.close(save=False)
    assert os.path.exists(tmp_path / "dump.sluice")
    again = Engine(clock=ManualClock(clock.now_ms()), dir=str(tmp_path))
    assert logged_state(again) == before
    again.close()


def test_turning_aof_on_later_keeps_the_data(tmp_path):
    clock = ManualClock(T0)
    engine = Engine(clock=clock, dir=str(tmp_path), save=[(1, 1)])
    engine.execute("SET", "k", "v")
    engine.close()                                       # saves (a save point is set)
    again = reopen(tmp_path, clock)                      # snapshot in, AOF base out
    assert again.execute("GET", "k") == b"v"
    again.execute("SET", "k2", "v2")
    again.close()
    os.unlink(tmp_path / "dump.sluice")
    last = reopen(tmp_path, clock)
    assert last.execute("MGET", "k", "k2") == [b"v", b"v2"]
    last.close()


def test_persistence_commands_without_a_directory():
    engine = Engine()
    for cmd in ("SAVE", "BGSAVE", "BGREWRITEAOF", "LASTSAVE"):
        with pytest.raises(ResponseError, match="persistence is off"):
            engine.execute(cmd)
    with pytest.raises(ResponseError, match="syntax error"):
        Engine().execute("BGSAVE", "NOW")
    with pytest.raises(TypeError):
        Engine(appendonly=True)


def test_rewrite_and_save_inside_exec_wait_for_its_end(tmp_path):
    """A rewrite starting mid-transaction would split MULTI ... EXEC across files."""
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always")
    client = EmbeddedRedis(engine=engine)
    client.set_response_callback("BGREWRITEAOF", lambda r, **kw: r)
    client.set_response_callback("BGSAVE", lambda r, **kw: r)
    before = manifest_of(tmp_path).base.seq
    pipe = client.pipeline(transaction=True)
    pipe.set("a", "1")
    pipe.execute_command("BGREWRITEAOF")
    pipe.execute_command("BGSAVE")
    pipe.set("b", "2")
    replies = pipe.execute()
    assert replies[1] == b"Background append only file rewriting scheduled"
    assert replies[2] == b"Background saving scheduled"
    assert manifest_of(tmp_path).base.seq == before + 1     # right after EXEC
    assert not os.path.exists(tmp_path / "dump.sluice")
    client.set("c", "3")                       # the next write runs the scheduled save
    assert os.path.exists(tmp_path / "dump.sluice")
    engine.close(save=False)
    again = reopen(tmp_path, clock)
    assert again.execute("MGET", "a", "b", "c") == [b"1", b"2", b"3"]
    again.close()


def test_automatic_rewrite_in_the_embedded_engine(tmp_path):
    clock = ManualClock(T0)
    engine = reopen(tmp_path, clock, appendfsync="always", auto_aof_rewrite_percentage=100,
                    auto_aof_rewrite_min_size=4096)
    for i in range(400):
        engine.execute("SET", "k", "x" * 50)
    assert manifest_of(tmp_path).base.seq > 1
    assert engine.durability.aof.size < 4096 * 3
    engine.close()
    again = reopen(tmp_path, clock)
    assert again.execute("GET", "k") == b"x" * 50
    again.close()


def test_every_cut_in_the_last_commands_loads_the_prefix_before_it(tmp_path):
    """A crash can stop a write at any byte: each cut within the last commands loads
    exactly the commands before it (and truncates the file there)."""
    import shutil
    clock = ManualClock(T0)
    src = tmp_path / "src"
    engine = reopen(src, clock, appendfsync="always")
    mixed_workload(engine, clock, random.Random(9), 120)
    engine.close()
    path = last_incr(src)
    data = open(path, "rb").read()
    reader = CommandReader(data, path)
    ends = [0]
    while reader.next() is not None:
        ends.append(reader.offset)
    later = ManualClock(clock.now_ms() + HOUR)
    prefix_state = {}
    for i, end in enumerate(ends[-5:-1]):
        copy = tmp_path / f"prefix{i}"
        shutil.copytree(src, copy)
        os.truncate(last_incr(copy), end)
        probe = reopen(copy, later)
        prefix_state[end] = logged_state(probe)
        probe.close(save=False)
    for cut in range(ends[-4], len(data)):
        copy = tmp_path / "cut"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(src, copy)
        os.truncate(last_incr(copy), cut)
        probe = reopen(copy, later)
        whole = max(e for e in ends if e <= cut)
        assert logged_state(probe) == prefix_state[whole], cut
        probe.close(save=False)
        assert os.path.getsize(last_incr(copy)) == whole
