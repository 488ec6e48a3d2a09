"""Durability proven by cutting the power: a kill -9 leaves what was written to
the kernel, a power cut keeps only what was fsynced (files) and the names a
directory fsync made durable (renames, new files, new directories). The server runs
with the preloaded library (tests/preloaded_calls.c) keeping a durable image of its
data directory; a cut freezes the image and kills the server and its children, the
directory is rebuilt from the image alone, and the server must load it.

With `appendfsync always` nothing acknowledged may be lost; with `everysec` only
what was acknowledged in the last seconds before the cut. Every rebuilt directory
must load: `sluice-aof check` passes or finds only a cut-off tail, which the server
accepts (aof-load-truncated)."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from typing import Callable

import pytest
import redis

from engine.server.testing import ServerProcess
from preloaded import PowerSupply
from test_crash_recovery import ClientModel, setup_groups, start_load

CLIENTS = 4
CUTS = 12                  # per policy: about a minute each
EVERYSEC_WINDOW = 2.0      # s: everysec loses at most the writes of this window
BULK = 20_000              # entries that make a rewrite or a save take a while
TRUNCATED_TAIL = "It ends inside a command"


class PoweredServer:
    """A ServerProcess on a power supply that the test can cut."""

    def __init__(self, library: str, image_dir: str, args: list) -> None:
        self.server = ServerProcess(args, loglevel="notice")
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
        self.supply.cut(self.server.proc.pid)
        self.server.stop()
        return cut_at

    def restart(self) -> None:
        """Rebuilds the directory from what was durable, checks it with the tool
        and starts the server on it."""
        self.supply.restore()
        self.checks.append(check_directory(self.server.dir))
        self.server.start()


def check_directory(directory: str) -> str:
    """sluice-aof check's verdict on a rebuilt directory holding an AOF: valid, or
    only its last file cut off inside a command; "" when there is no AOF."""
    if not os.path.isdir(os.path.join(directory, "appendonlydir")):
        return ""
    done = subprocess.run([sys.executable, "-m", "tools.aof_cli", "check", directory],
                          capture_output=True, text=True)
    verdict = done.stdout + done.stderr
    assert done.returncode == 0 or (done.returncode == 1 and TRUNCATED_TAIL in verdict), verdict
    return verdict.strip()


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def persistence(r: redis.Redis) -> dict:
    return r.info("persistence")


def fill_bulk(r: redis.Redis) -> list:
    pipe = r.pipeline(transaction=False)
    for i in range(BULK):
        pipe.xadd("bulk", {"i": i})
    return pipe.execute()


# -- many cuts under load -----------------------------------------------------------

def background_work(port: int, rng: random.Random, stop: threading.Event) -> None:
    """BGREWRITEAOF and BGSAVE at random moments (refused while one runs)."""
    r = redis.Redis(port=port, socket_timeout=10)
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


def lost_after_everysec_cut(model: ClientModel, r: redis.Redis, cut_at: float) -> int:
    """Checks that every XADD the model lost was acknowledged within the window before
    the cut, then adopts what the server holds; the number lost."""
    ids = {entry_id for entry_id, _ in r.xrange(model.key)}
    lost = model.entries - ids
    old = sorted(cut_at - model.added_at[i] for i in lost if cut_at - model.added_at[i]
                 > EVERYSEC_WINDOW)
    assert not old, f"{model.key}: {len(old)} XADDs acknowledged {old[-1]:.2f} s before the cut lost"
    assert len(ids - model.entries) <= 1, f"{model.key}: unknown entries"
    model.entries = ids
    pel = {p["message_id"]: p["consumer"].decode()
           for p in r.xpending_range(model.key, model.group, "-", "+", 10 ** 6)}
    model.owner = pel
    model.acked -= set(pel)
    model.in_flight = None
    return len(lost)


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
        lost, during = 0, []
        for cut in range(CUTS):
            stop, threads = start_load(powered.server, models, cut)
            if rng.random() < 0.7:
                threads.append(threading.Thread(target=background_work, daemon=True,
                                                args=(powered.port, random.Random(cut), stop)))
                threads[-1].start()
            time.sleep(rng.uniform(0.3, 2.5))
            info = persistence(powered.client())
            during.append((info["aof_rewrite_in_progress"], info["rdb_bgsave_in_progress"]))
            cut_at = powered.cut()
            stop.set()
            for t in threads:
                t.join(15)
            powered.restart()
            r = powered.client()
            assert r.xlen("bulk") == BULK
            for m in models:
                if policy == "always":
                    m.verify(r)
                else:
                    lost += lost_after_everysec_cut(m, r, cut_at)
            r.close()
        print(f"\n{policy}: {CUTS} cuts, XADDs acknowledged {sum(len(m.added_at) for m in models)}, "
              f"lost (within {EVERYSEC_WINDOW} s) {lost}, during a rewrite "
              f"{sum(a for a, _ in during)}, during a save {sum(b for _, b in during)}, "
              f"truncated tails {sum(TRUNCATED_TAIL in c for c in powered.checks)}")
        assert sum(len(m.entries) for m in models) > 100     # the load did real work
        log = powered.server.log_text()
        assert "Background AOF rewrite terminated with success" in log
        assert "Background saving terminated with success" in log


# -- one cut right after each rename or new file ------------------------------------

def rewrite_done(r: redis.Redis, rewrites: int) -> Callable[[], bool]:
    def done() -> bool:
        info = persistence(r)
        return info["aof_rewrites"] > rewrites and not info["aof_rewrite_in_progress"]
    return done


def after_start(r: redis.Redis) -> None:
    """The first AOF of a fresh directory: appendonlydir is new."""


def after_rewrite(r: redis.Redis) -> None:
    """BGREWRITEAOF finished: a new base renamed in, the manifest swapped."""
    rewrites = persistence(r)["aof_rewrites"]
    r.bgrewriteaof()
    wait_for(rewrite_done(r, rewrites))


def after_rewrite_started(r: redis.Redis) -> None:
    """BGREWRITEAOF started: writes go to a new incremental file, the child still
    writes the base."""
    r.bgrewriteaof()
    r.xadd("s", {"after": "rewrite started"})


def after_enabling_the_aof(r: redis.Redis) -> None:
    """CONFIG SET appendonly yes: a base of the current state, appendonlydir new."""
    r.config_set("appendonly", "yes")


def after_save(r: redis.Redis) -> None:
    """SAVE: the snapshot written to a temporary file and renamed."""
    r.save()


def after_bgsave(r: redis.Redis) -> None:
    """BGSAVE finished, as the child did it."""
    saves = persistence(r)["rdb_saves"]
    r.bgsave()
    wait_for(lambda: persistence(r)["rdb_saves"] > saves
             and not persistence(r)["rdb_bgsave_in_progress"])


AOF = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
SNAPSHOTS = ["--appendonly", "no", "--save", ""]


@pytest.mark.parametrize("action, args, restart_args", [
    (after_start, AOF, AOF),
    (after_rewrite, AOF, AOF),
    (after_rewrite_started, AOF, AOF),
    (after_enabling_the_aof, SNAPSHOTS, AOF),
    (after_save, SNAPSHOTS, SNAPSHOTS),
    (after_bgsave, SNAPSHOTS, SNAPSHOTS),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_a_power_cut_right_after_an_acknowledged_operation_keeps_it(
        preloaded_library, tmp_path, action, args, restart_args):
    with PoweredServer(preloaded_library, str(tmp_path / "image"), args) as powered:
        r = powered.client()
        for i in range(10):
            r.xadd("s", {"i": i})
        action(r)
        written = [entry_id for entry_id, _ in r.xrange("s")]
        assert len(written) >= 10
        r.close()
        powered.server.args = restart_args
        powered.cut()
        powered.restart()
        r = powered.client()
        assert [entry_id for entry_id, _ in r.xrange("s")] == written
        r.close()
