"""Durability proven by cutting the power: a kill -9 leaves what was written to
the kernel, a power cut keeps only what was fsynced (files) and the names a
directory fsync made durable (renames, new files, new directories). The server runs
with the preloaded library (tests/preloaded_calls.c) keeping a durable image of its
data directory; a cut freezes the image and kills the server and its children, the
directory is rebuilt from the image alone, and the server must load it.

With `appendfsync always` nothing acknowledged may be lost. With `everysec`, timed
by the server's own fsyncs (the library logs each one's start and end), not by
how long before the cut a write was acknowledged, which a loaded machine's slow
disk stretches: nothing acknowledged before the start of the last fsync that
completed may be lost, and every acknowledged write sees an fsync begin within
about a second, not counting the time spent in fsync calls (the disk's); the
fsync thread's own period is checked under load without rewrites (with them, a
rewrite's start fsyncs in the main thread often enough to leave it nothing to do). Every rebuilt directory
must load: `sluice-aof check` passes or finds only a cut-off tail, which the server
accepts (aof-load-truncated). Cuts land at random moments under load, and right
after each operation that creates or renames a file; the embedded engine is cut
too."""
from __future__ import annotations

import contextlib
import io
import os
import random
import subprocess
import sys
import threading
import time
from typing import Callable

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from servers import SluiceServer
from preloaded import PowerSupply
from test_crash_recovery import ClientModel, setup_groups, start_load
from test_persistence_errors import wait_for
from tools import aof_cli

CLIENTS = 4
CUTS = 20                  # per policy: under a minute each
EVERYSEC_START = 1.5       # s: the most an acknowledged write waits, with everysec,
                           # until an fsync begins (the fsync thread's period is 1 s;
                           # time spent in fsync calls, the disk's, does not count)
BULK = 20_000              # entries that make a rewrite or a save take a while
TRUNCATED_TAIL = "It ends inside a command"


class PoweredServer:
    """A SluiceServer on a power supply that the test can cut."""

    def __init__(self, library: str, image_dir: str, args: list) -> None:
        self.server = SluiceServer(args, loglevel="notice")
        self.supply = PowerSupply(library, self.server.dir, image_dir)
        self.server.env = self.supply.env()
        self.checks: list = []             # what sluice-aof check said after each cut

    def __enter__(self) -> "PoweredServer":
        self.server.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.close()

    @property
    def port(self) -> int:
        return self.server.port

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=10)

    def cut(self) -> float:
        """Cuts the power; when it went (monotonic)."""
        cut_at = time.monotonic()
        proc = self.server.proc
        self.supply.cut(proc.pid if proc.poll() is None else None)
        self.server.stop()
        return cut_at

    def restart(self) -> None:
        """Rebuilds the directory from what was durable, checks it with the tool
        and starts the server on it (on a new port)."""
        self.supply.restore()
        self.checks.append(check_directory(self.server.dir))
        self.server.port = None             # another process may have taken the old one
        self.server.start()


def check_directory(directory: str) -> str:
    """`sluice-aof check`'s verdict (run in this process) on a rebuilt directory
    holding an AOF: valid, or only its last file cut off inside a command; "" when
    there is no AOF."""
    if not os.path.isdir(os.path.join(directory, "appendonlydir")):
        return ""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = aof_cli.main(["check", directory])
    verdict = out.getvalue()
    cut_off = code == aof_cli.EXIT_DAMAGED and TRUNCATED_TAIL in verdict
    assert code == aof_cli.EXIT_OK or cut_off, verdict
    return verdict.strip()


def persistence(r: redis.Redis) -> dict:
    return r.info("persistence")


def fill_bulk(r: redis.Redis) -> None:
    pipe = r.pipeline(transaction=False)
    for i in range(BULK):
        pipe.xadd("bulk", {"i": i})
    pipe.execute()


# -- many cuts under load -----------------------------------------------------------

def background_work(port: int, rng: random.Random, stop: threading.Event) -> None:
    """BGREWRITEAOF and BGSAVE at random moments (refused while one runs)."""
    r = redis.Redis(port=port, socket_timeout=10, retry=Retry(NoBackoff(), 0))
    try:
        while not stop.wait(rng.uniform(0.05, 0.5)):
            try:
                r.execute_command(rng.choice(["BGREWRITEAOF", "BGSAVE"]))
            except redis.ResponseError:
                pass
    except (redis.ConnectionError, redis.TimeoutError):
        pass                                    # the cut
    finally:
        r.close()


def aof_syncs(powered: PoweredServer, pid: int) -> list:
    """The fsyncs process pid made of the AOF's incremental files: what it appends
    to (the manifest, bases and the directory are synced on their own steps)."""
    return [c for c in powered.supply.syncs() if c.pid == pid and c.path.endswith(".incr.aof")]


def lost_after_everysec_cut(model: ClientModel, r: redis.Redis, syncs: list) -> list:
    """Checks that every XADD the model lost was acknowledged after the start of the
    server's last completed fsync (one that began later covered it: its write came
    before the reply), then adopts what the server holds; the lost ones'
    acknowledgement times."""
    covered_until = max((c.began for c in syncs if c.ended is not None), default=-1.0)
    ids = {entry_id for entry_id, _ in r.xrange(model.key)}
    lost = model.entries - ids
    early = sorted(i for i in lost if model.added_at[i] <= covered_until)
    assert not early, f"{model.key}: {len(early)} XADDs lost though acknowledged before an " \
                      f"fsync began that completed (first {early[0]})"
    assert len(ids - model.entries) <= 1, f"{model.key}: unknown entries"
    model.entries = ids
    pel = {p["message_id"]: p["consumer"].decode()
           for p in r.xpending_range(model.key, model.group, "-", "+", 10 ** 6)}
    model.owner = pel
    model.acked -= set(pel)
    model.in_flight = None
    return [model.added_at[i] for i in lost]


def time_in_syncs(syncs: list, start: float, end: float, cut_at: float) -> float:
    """How much of (start, end) some of the sync calls spent running (one that the
    cut interrupted ran until the cut)."""
    spans = sorted((max(c.began, start), min(c.ended or cut_at, end)) for c in syncs)
    total, reached = 0.0, start
    for began, ended in spans:
        began = max(began, reached)
        if ended > began:
            total += ended - began
            reached = ended
    return total


def fsync_start_delays(acks: list, syncs: list, cut_at: float) -> list:
    """For each acknowledgement time: how long until an fsync of the AOF began
    (covering it: by the fsync thread, or by the main thread at a rewrite's start),
    or the cut came, leaving out the time spent in fsync calls meanwhile (one in
    flight; the main thread's holds the log's lock): the disk's time is not the
    policy's."""
    begins = sorted(c.began for c in syncs)
    delays = []
    for acked in acks:
        began = next((b for b in begins if b > acked), cut_at)
        began = min(began, cut_at)
        delays.append(began - acked - time_in_syncs(syncs, acked, began, cut_at))
    return delays


def sync_calls_around(powered: PoweredServer, moment: float, cut_at: float) -> str:
    """The sync calls of every process from 2 s before `moment` to the cut, timed
    from `moment` (for a failure's message)."""
    return "\n".join(
        f"{c.began - moment:+.3f} {'-' if c.ended is None else f'{c.ended - c.began:.3f}'} "
        f"pid {c.pid} tid {c.tid} {os.path.basename(c.path)}"
        for c in powered.supply.syncs() if moment - 2 <= c.began <= cut_at)


def cut_under_load(powered: PoweredServer, models: list, rng: random.Random,
                   cycle: int) -> tuple:
    """Clients writing for a random while (in most cycles with BGREWRITEAOF and
    BGSAVE sent at random moments, and one more of them just before the cut, so
    that it often lands while a child works), then the cut: (when, INFO
    persistence a moment before)."""
    stop, threads = start_load(powered.server, models, cycle)
    if rng.random() < 0.7:
        threads.append(threading.Thread(target=background_work, daemon=True,
                                        args=(powered.port, random.Random(cycle), stop)))
        threads[-1].start()
    time.sleep(rng.uniform(0.3, 2.0))
    r = powered.client()
    if rng.random() < 0.8:
        try:
            r.execute_command(rng.choice(["BGREWRITEAOF", "BGSAVE"]))
        except redis.ResponseError:
            pass                            # one is running already
        time.sleep(rng.uniform(0, 0.2))
    info = persistence(r)
    r.close()
    cut_at = powered.cut()
    stop.set()
    for t in threads:
        t.join(15)
    return cut_at, info


@pytest.mark.parametrize("policy", ["always", "everysec"])
def test_power_cuts_under_load_during_rewrites_and_saves(preloaded_library, tmp_path, policy):
    rng = random.Random(f"power-{policy}")
    models = [ClientModel(i) for i in range(CLIENTS)]
    args = ["--appendonly", "yes", "--appendfsync", policy, "--save", "2 1000",
            "--auto-aof-rewrite-percentage", "50", "--auto-aof-rewrite-min-size", "256kb"]
    with PoweredServer(preloaded_library, str(tmp_path / "image"), args) as powered:
        setup_groups(powered.server, models)
        r = powered.client()
        fill_bulk(r)
        r.close()
        lost_ages, delays, during = [], [], []
        for cycle in range(CUTS):
            life_began, pid = time.monotonic(), powered.server.proc.pid
            cut_at, info = cut_under_load(powered, models, rng, cycle)
            during.append((info["aof_rewrite_in_progress"], info["rdb_bgsave_in_progress"]))
            powered.restart()
            r = powered.client()
            assert r.xlen("bulk") == BULK, f"cut {cycle}"
            syncs = aof_syncs(powered, pid)
            for m in models:
                if policy == "always":
                    m.verify(r)
                else:
                    lost_ages += [cut_at - t for t in lost_after_everysec_cut(m, r, syncs)]
            r.close()
            if policy == "everysec":
                acks = [t for m in models for t in m.added_at.values() if life_began <= t < cut_at]
                waits = fsync_start_delays(acks, syncs, cut_at)
                worst = max(range(len(waits)), key=waits.__getitem__, default=None)
                assert worst is None or waits[worst] <= EVERYSEC_START, \
                    f"cut {cycle}: a write waited {waits[worst]:.2f} s for an fsync; " \
                    f"cut at {cut_at - acks[worst]:+.3f}, server pid {pid}, sync calls (began " \
                    f"from the acknowledgement, duration):\n" \
                    + sync_calls_around(powered, acks[worst], cut_at)
                delays += waits
        print(f"\n{policy}: {CUTS} cuts, {sum(map(sum, zip(*during)))} while a child ran "
              f"({sum(a for a, _ in during)} rewrites, {sum(b for _, b in during)} saves); "
              f"XADDs acknowledged {sum(len(m.added_at) for m in models)}, lost {len(lost_ages)} "
              f"(acknowledged up to {max(lost_ages, default=0):.2f} s before the cut; an fsync "
              f"began at most {max(delays, default=0):.2f} s after a write's "
              f"acknowledgement, time in fsync calls aside); "
              f"cut-off tails {sum(TRUNCATED_TAIL in c for c in powered.checks)}")
        if policy == "everysec":
            assert len(delays) > 1000                 # the check saw the load's writes
        assert sum(len(m.entries) for m in models) > 100     # the load did real work
        log = powered.server.log_text()
        assert "Starting automatic rewriting of AOF" in log
        assert "Background AOF rewrite terminated with success" in log
        assert "Background saving terminated with success" in log


def test_the_everysec_thread_fsyncs_once_a_second_under_load(preloaded_library, tmp_path):
    """No rewrites or saves: every fsync of the AOF is the thread's. Under a steady
    load it begins one a second after the last ended, each write sees one begin
    within EVERYSEC_START, and a cut loses only what came after the last began."""
    models = [ClientModel(i) for i in range(CLIENTS)]
    args = ["--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
            "--auto-aof-rewrite-percentage", "0"]
    with PoweredServer(preloaded_library, str(tmp_path / "image"), args) as powered:
        setup_groups(powered.server, models)
        pid, began = powered.server.proc.pid, time.monotonic()
        stop, threads = start_load(powered.server, models, 0)
        time.sleep(4.5)
        cut_at = powered.cut()
        stop.set()
        for t in threads:
            t.join(15)
        powered.restart()
        syncs = aof_syncs(powered, pid)
        thread = [c for c in syncs if c.began > began]          # after the start's
        assert len(thread) >= 2 and all(c.tid != c.pid for c in thread), syncs
        gaps = [b.began - a.ended for a, b in zip(thread, thread[1:])]
        assert all(0.95 <= gap <= EVERYSEC_START for gap in gaps), gaps
        acks = [t for m in models for t in m.added_at.values()]
        assert len(acks) > 100 and max(fsync_start_delays(acks, syncs, cut_at)) <= EVERYSEC_START
        r = powered.client()
        for m in models:
            lost_after_everysec_cut(m, r, syncs)
        r.close()


# -- one cut right after each rename or new file ------------------------------------

def rewrite_done(r: redis.Redis, rewrites: int) -> Callable[[], bool]:
    def done() -> bool:
        info = persistence(r)
        return info["aof_rewrites"] > rewrites and not info["aof_rewrite_in_progress"]
    return done


def after_start(powered: PoweredServer, r: redis.Redis) -> list:
    """The first AOF of a fresh directory: appendonlydir is new."""
    return []


def after_rewrite(powered: PoweredServer, r: redis.Redis) -> list:
    """BGREWRITEAOF finished: a new base renamed in, the manifest swapped."""
    rewrites = persistence(r)["aof_rewrites"]
    r.bgrewriteaof()
    wait_for(rewrite_done(r, rewrites))
    return []


def after_rewrite_started(powered: PoweredServer, r: redis.Redis) -> list:
    """BGREWRITEAOF started: writes go to a new incremental file, the child still
    writes the base."""
    r.bgrewriteaof()
    return [r.xadd("s", {"after": "rewrite started"})]


def after_enabling_the_aof(powered: PoweredServer, r: redis.Redis) -> list:
    """CONFIG SET appendonly yes: a base of the current state, appendonlydir new."""
    r.config_set("appendonly", "yes")
    return []


def after_reenabling_the_aof(powered: PoweredServer, r: redis.Redis) -> list:
    """CONFIG SET appendonly no, a write, yes again: the old files become history."""
    r.config_set("appendonly", "no")
    added = r.xadd("s", {"while": "off"})
    r.config_set("appendonly", "yes")
    return [added]


def after_save(powered: PoweredServer, r: redis.Redis) -> list:
    """SAVE: the snapshot written to a temporary file and renamed."""
    r.save()
    return []


def after_bgsave(powered: PoweredServer, r: redis.Redis) -> list:
    """BGSAVE finished, as the child did it."""
    saves = persistence(r)["rdb_saves"]
    r.bgsave()
    wait_for(lambda: persistence(r)["rdb_saves"] > saves
             and not persistence(r)["rdb_bgsave_in_progress"])
    return []


def after_shutdown(powered: PoweredServer, r: redis.Redis) -> list:
    """SHUTDOWN: the last save point snapshot, the AOF's last write and fsync."""
    r.shutdown()
    powered.server.proc.wait(timeout=20)
    return []


AOF = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
AOF_EVERYSEC_SAVING = ["--appendonly", "yes", "--appendfsync", "everysec", "--save", "3600 1"]
SNAPSHOTS = ["--appendonly", "no", "--save", ""]
SNAPSHOTS_SAVING = ["--appendonly", "no", "--save", "3600 1"]


@pytest.mark.parametrize("action, args, restart_args", [
    pytest.param(after_start, AOF, AOF, id="start"),
    pytest.param(after_rewrite, AOF, AOF, id="rewrite"),
    pytest.param(after_rewrite_started, AOF, AOF, id="new-incremental-file"),
    pytest.param(after_enabling_the_aof, SNAPSHOTS, AOF, id="appendonly-yes"),
    pytest.param(after_reenabling_the_aof, AOF, AOF, id="appendonly-no-then-yes"),
    pytest.param(after_save, SNAPSHOTS, SNAPSHOTS, id="save"),
    pytest.param(after_bgsave, SNAPSHOTS, SNAPSHOTS, id="bgsave"),
    pytest.param(after_shutdown, AOF_EVERYSEC_SAVING, AOF_EVERYSEC_SAVING, id="shutdown-aof"),
    pytest.param(after_shutdown, SNAPSHOTS_SAVING, SNAPSHOTS_SAVING, id="shutdown-snapshot"),
])
def test_a_power_cut_right_after_an_acknowledged_operation_keeps_it(
        preloaded_library, tmp_path, action, args, restart_args):
    with PoweredServer(preloaded_library, str(tmp_path / "image"), args) as powered:
        r = powered.client()
        written = [r.xadd("s", {"i": i}) for i in range(10)]
        written += action(powered, r)
        r.close()
        powered.server.args = restart_args
        powered.cut()
        powered.restart()
        r = powered.client()
        assert [entry_id for entry_id, _ in r.xrange("s")] == written
        r.close()


@pytest.mark.parametrize("policy", ["everysec", "no"])
def test_a_power_cut_right_after_waitaof_keeps_what_it_counted(preloaded_library, tmp_path,
                                                                policy):
    """WAITAOF's local count is what a power cut keeps. Under everysec it answers 1 once
    the sync thread has fsynced the client's writes, and a cut right after keeps them all
    (everysec alone may lose the last second); under `no` nothing fsyncs them: it
    answers 0 at its timeout, and the cut loses them."""
    args = ["--appendonly", "yes", "--appendfsync", policy, "--save", ""]
    with PoweredServer(preloaded_library, str(tmp_path / "image"), args) as powered:
        r = powered.client()
        written = [r.xadd("s", {"i": i}) for i in range(20)]
        local = 1 if policy == "everysec" else 0
        assert r.waitaof(1, 0, 5000 if local else 200) == [local, 0]
        r.close()
        powered.cut()
        powered.restart()
        r = powered.client()
        assert [entry_id for entry_id, _ in r.xrange("s")] == (written if local else [])
        r.close()


def test_a_power_cut_right_after_config_rewrite_keeps_the_new_file(preloaded_library, tmp_path):
    """CONFIG REWRITE replaces the file through a temporary one and a rename: once
    it answered OK, a restart reads the new settings, power cut or not."""
    powered = PoweredServer(preloaded_library, str(tmp_path / "image"), ["--save", ""])
    conf = os.path.join(powered.server.dir, "sluice.conf")
    with open(conf, "w") as fh:
        fh.write("timeout 100\n")
    powered.server.config_file = conf
    with powered:
        r = powered.client()
        r.config_set("timeout", "200")
        assert r.config_rewrite() == b"OK"
        r.close()
        powered.cut()
        powered.restart()
        r = powered.client()
        assert r.config_get("timeout") == {"timeout": "200"}
        r.close()


EMBEDDED_WRITER = """
import sys
from engine import Engine

engine = Engine(dir=sys.argv[1], appendonly=True, appendfsync="always", save=[(2, 300)],
                auto_aof_rewrite_percentage=50, auto_aof_rewrite_min_size=64 * 1024)
for i in range(10 ** 9):
    print(engine.execute("XADD", "s", "*", "i", str(i)).decode(), flush=True)
    if i % 300 == 299:
        engine.execute("BGREWRITEAOF")
    if i % 450 == 449:
        engine.execute("BGSAVE")
"""


def test_power_cuts_keep_what_the_embedded_engine_acknowledged(preloaded_library, tmp_path):
    """The embedded engine with `always` (rewrites, saves and automatic rewrites run
    inline): every XADD that returned survives a cut at a random moment. Its data
    directory is new: the engine creates it in the project's directory."""
    from engine import Engine

    project = tmp_path / "project"
    project.mkdir()
    data = project / "data"
    supply = PowerSupply(preloaded_library, str(project), str(tmp_path / "image"), keep=())
    rng = random.Random("embedded")
    acked: list = []
    for cut in range(5):
        writer = subprocess.Popen([sys.executable, "-c", EMBEDDED_WRITER, str(data)],
                                  env=supply.env(), stdout=subprocess.PIPE, text=True)
        reader = threading.Thread(target=lambda: acked.extend(line.strip()
                                                              for line in writer.stdout))
        reader.start()
        time.sleep(rng.uniform(0.5, 2.0))
        supply.cut(writer.pid)
        writer.wait()
        reader.join()
        supply.restore()
        engine = Engine(dir=str(data), appendonly=True)
        present = {entry[0].decode() for entry in engine.execute("XRANGE", "s", "-", "+")}
        engine.close()
        missing = [entry_id for entry_id in acked if entry_id not in present]
        assert not missing, f"cut {cut}: {len(missing)} of {len(acked)} acknowledged XADDs lost"
    assert len(acked) > 1000              # rewrites and saves ran
