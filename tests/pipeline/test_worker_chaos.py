"""Chaos for the reliable consumer (issue 16): worker processes over thousands of tasks on a
sluice-server that fsyncs every write, while random workers are killed with kill -9 and
replaced, one slow worker holds tasks past MinIdleTime with its locks alive, poison tasks
always fail, and the server itself is killed with kill -9 and restarted in the middle.

Afterwards: every task completed at least once; no task ran in two workers at once while
its first owner lived; the poison tasks are in the DLQ with their retry count; and the
metrics the workers serve on /metrics agree with what the execution logs and the server
hold. Run with -s to see the counts.

The workers that are killed (victims) only run tasks: no expiry listener, and a scan that
never finds anything idle enough. Recovery is done by the workers that live to the end
(steady ones and the slow one), so their counters account for every requeue and DLQ move.
Every other steady worker and victim is an AsyncWorker (a killed victim is replaced by one
of its kind), the rest are sync Workers."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
import redis

import servers
from metrics_scrape import SampleKey, sample, scrape
from sluice.worker import dlq_key

STREAM, GROUP = "chaos", "crew"
TASKS, POISON = 2500, 6                 # good tasks, and poison ones among them
TASK_SLEEP_S = (0.05, 0.45)             # each good task sleeps a random time in this range
SLOW_S = 14.0                           # the slow worker's every task: past MIN_IDLE_S
# A lock outlives the server's downtime (about 1-2 s) by a wide margin, so no live
# owner loses its lock while the server is away.
LOCK_TTL_S, HEARTBEAT_S, MIN_IDLE_S = 6.0, 1.0, 12.0
MAX_RETRIES = 2
STEADY, VICTIMS = 2, 3                  # workers that live to the end; workers killed and replaced
KILL_EVERY_S = 3.0                      # a random victim is killed this often ...
CHAOS_S = 36.0                          # ... for this long after the start
SERVER_KILL_AT_S, SERVER_DOWN_S = 18.0, 1.0
DEADLINE_S = 180.0
SEED = 16
MODES = ("sync", "async")

WORKER_SCRIPT = Path(__file__).with_name("chaos_worker.py")
COMMON = {"stream": STREAM, "group": GROUP, "concurrency": 4, "lock_ttl": LOCK_TTL_S,
          "heartbeat_interval": HEARTBEAT_S, "block": 0.5, "shutdown_timeout": 5.0,
          "metrics_host": "127.0.0.1"}
RECOVERING = {"reconciliation_interval": 1.0, "min_idle_time": MIN_IDLE_S, "max_retries": MAX_RETRIES,
              "batch_size": 200}
# Victims recover nothing, not even their own failed tasks (those wait for their locks
# to expire): their counters die with them.
NOT_RECOVERING = {"keyspace_listener": False, "reconciliation_interval": 3600.0,
                  "min_idle_time": 7200.0, "max_retries": MAX_RETRIES, "retry_backoff": "lock"}
REQUEUE_COUNTERS = ("recovery_keyspace_requeued", "recovery_scan_requeued", "recovery_shutdown_requeued",
                    "tasks_retried")


@dataclass
class Proc:
    """A worker process and what the test knows of it."""

    name: str
    role: str                           # steady | slow | victim
    mode: str                           # sync | async
    popen: subprocess.Popen
    log: Path
    metrics_port: int
    died_at: Optional[float] = None     # time.time() once killed with kill -9
    stats: dict = field(default_factory=dict)
    scraped: dict[SampleKey, float] = field(default_factory=dict)   # its /metrics before the stop


@dataclass
class Execution:
    task: str
    pid: int
    start: float
    end: Optional[float] = None
    outcome: str = ""                   # done | fail | "" (never ended)


class Fleet:
    """Starts worker processes against one server port; kills what is left at the end."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port = port
        self.workdir = workdir
        self.procs: list[Proc] = []

    def start(self, name: str, role: str, mode: str) -> Proc:
        settings = {**COMMON, "recovery": NOT_RECOVERING if role == "victim" else RECOVERING,
                    "metrics_port": servers.free_port(), **({"concurrency": 2} if role == "slow" else {})}
        log = self.workdir / f"{name}.log"
        argv = [sys.executable, str(WORKER_SCRIPT), str(self.port), name, mode, json.dumps(settings), str(log),
                *([str(SLOW_S)] if role == "slow" else [])]
        with open(self.workdir / f"{name}.err", "w") as err:
            popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True,
                                     env=servers.checkout_env())
        proc = Proc(name, role, mode, popen, log, settings["metrics_port"])
        self.procs.append(proc)
        return proc

    def alive(self, role: str) -> list[Proc]:
        return [p for p in self.procs if p.role == role and p.died_at is None]

    def kill(self, proc: Proc) -> None:
        proc.popen.kill()
        proc.popen.wait()
        proc.died_at = time.time()

    def stop(self, proc: Proc) -> None:
        """SIGTERM; its final stats (the JSON it prints)."""
        proc.popen.send_signal(signal.SIGTERM)
        out, _ = proc.popen.communicate(timeout=30)
        assert proc.popen.returncode == 0, f"{proc.name} exited {proc.popen.returncode}: see {proc.name}.err"
        proc.stats = json.loads(out)

    def close(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                proc.popen.kill()
            proc.popen.communicate()


def executions(procs: list[Proc]) -> list[Execution]:
    """Every execution the workers' logs recorded."""
    runs: dict[str, Execution] = {}
    for proc in procs:
        if not proc.log.exists():
            continue
        for line in proc.log.read_text().splitlines():
            event, execution, task, pid, at = line.split()
            if event == "start":
                runs[execution] = Execution(task, int(pid), float(at))
            else:
                runs[execution].end, runs[execution].outcome = float(at), event
    return list(runs.values())


def overlaps(runs: list[Execution], died_at: dict[int, float]) -> list[tuple[Execution, Execution]]:
    """Pairs of executions of one task that ran at the same time; an execution that never
    ended lasted until its worker was killed (forever, if it was not)."""
    by_task: dict[str, list[Execution]] = defaultdict(list)
    for run in runs:
        by_task[run.task].append(run)
    found = []
    for same in by_task.values():
        same.sort(key=lambda r: r.start)
        for i, first in enumerate(same):
            until = first.end if first.end is not None else died_at.get(first.pid, float("inf"))
            found += [(first, later) for later in same[i + 1:] if later.start < until]
    return found


def settled(client: redis.Redis) -> bool:
    """Everything in the stream was delivered and acknowledged, the poison tasks are dead."""
    last = client.xrevrange(STREAM, count=1)
    [group] = client.xinfo_groups(STREAM)
    return (client.xlen(dlq_key(STREAM)) == POISON and client.xpending(STREAM, GROUP)["pending"] == 0
            and bool(last) and group["last-delivered-id"] == last[0][0])


def labels(proc: Proc) -> dict[str, str]:
    return {"stream": STREAM, "group": GROUP, "consumer": proc.name}


def add_tasks(client: redis.Redis, rng: random.Random) -> tuple[set[str], set[str]]:
    """The good tasks' numbers (field `n`) and the poison tasks' entry IDs."""
    poison = set(rng.sample(range(TASKS + POISON), POISON))
    pipe = client.pipeline(transaction=False)
    for n in range(TASKS + POISON):
        pipe.xadd(STREAM, {"n": n, "fail": 1} if n in poison else
                  {"n": n, "sleep": round(rng.uniform(*TASK_SLEEP_S), 3)})
    ids = pipe.execute()
    return {str(n) for n in range(TASKS + POISON) if n not in poison}, {ids[n] for n in poison}


@dataclass
class Chaos:
    """What the run did to the workers and the server."""

    seconds: float = 0.0
    kills: int = 0
    mid_task: int = 0                   # kills of a worker with an execution under way
    server_down_s: float = 0.0


def unleash(fleet: Fleet, sluice: servers.SluiceServer, client: redis.Redis, good: set[str],
            rng: random.Random) -> Chaos:
    """Kills victims and the server on schedule; returns once everything settled."""
    chaos, started = Chaos(), time.monotonic()
    next_kill, server_killed = started + KILL_EVERY_S, False
    while True:
        now = time.monotonic()
        assert now - started < DEADLINE_S, f"the run did not settle in time: {chaos}"
        if now >= next_kill and now - started < CHAOS_S:
            victims = fleet.alive("victim")
            busy = [p for p in victims if any(r.end is None for r in executions([p]))]
            victim = rng.choice(busy or victims)
            fleet.kill(victim)
            chaos.kills, chaos.mid_task = chaos.kills + 1, chaos.mid_task + bool(busy)
            fleet.start(f"victim{VICTIMS + chaos.kills - 1}", "victim", victim.mode)
            next_kill = now + KILL_EVERY_S
        if not server_killed and now - started >= SERVER_KILL_AT_S:
            sluice.stop(signal.SIGKILL)
            time.sleep(SERVER_DOWN_S)
            sluice.start()
            chaos.server_down_s, server_killed = time.monotonic() - now, True
        done = {r.task for r in executions(fleet.procs) if r.outcome == "done"}
        if now - started >= CHAOS_S and server_killed and done >= good and settled(client):
            chaos.seconds = time.monotonic() - started
            return chaos
        time.sleep(0.2)


def scrape_and_stop(fleet: Fleet) -> None:
    """Once every recovering worker's last scan saw the group settled (pel_depth 0):
    scrape each living worker's /metrics, then stop it (its stats: what it printed)."""
    survivors = fleet.alive("steady") + fleet.alive("slow")
    deadline = time.monotonic() + 30
    while any(sample(scrape(p.metrics_port), "pel_depth", stream=STREAM, group=GROUP) for p in survivors):
        assert time.monotonic() < deadline, "pel_depth did not drop to 0"
        time.sleep(0.2)
    for proc in survivors + fleet.alive("victim"):
        proc.scraped = scrape(proc.metrics_port)
        fleet.stop(proc)


def check_metrics(proc: Proc, runs: list[Execution]) -> None:
    """A worker that exited cleanly: its stats count its executions, and /metrics served them."""
    mine = [r for r in runs if r.pid == proc.popen.pid]
    assert proc.stats["tasks_done"] == sum(r.outcome == "done" for r in mine), proc
    assert proc.stats["tasks_failed"] == sum(r.outcome == "fail" for r in mine), proc
    for name, value in proc.stats.items():
        if name in ("pel_depth", "group_lag"):   # gauges: a victim's one scan, at start, saw work
            assert proc.role == "victim" or value == 0, (proc.name, value)
        elif name != "recovery_scans":  # scans go on between the scrape and the stop
            assert sample(proc.scraped, f"{name}_total", **labels(proc)) == value, (proc.name, name)
    assert sample(proc.scraped, "handler_duration_seconds_count", **labels(proc)) == \
        proc.stats["tasks_done"] + proc.stats["tasks_failed"], proc.name
    assert sample(proc.scraped, "recovery_scan_duration_seconds_count", **labels(proc)) == \
        sample(proc.scraped, "recovery_scans_total", **labels(proc)) >= 1, proc.name


@pytest.fixture
def sluice(tmp_path: Path) -> Iterator[servers.SluiceServer]:
    with servers.SluiceServer(["--appendonly", "yes", "--appendfsync", "always"], workdir=tmp_path) as srv:
        yield srv


def test_chaos_loses_nothing_and_runs_nothing_twice_at_once(sluice: servers.SluiceServer, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    client = redis.Redis(port=sluice.port, decode_responses=True)
    good, poison_ids = add_tasks(client, rng)
    fleet = Fleet(sluice.port, tmp_path)
    try:
        for k in range(STEADY):
            fleet.start(f"steady{k}", "steady", MODES[k % 2])
        fleet.start("slow", "slow", "sync")
        for k in range(VICTIMS):
            fleet.start(f"victim{k}", "victim", MODES[k % 2])
        chaos = unleash(fleet, sluice, client, good, rng)
        scrape_and_stop(fleet)
    finally:
        fleet.close()
    dead = client.xrange(dlq_key(STREAM))
    requeued = [f for _, f in client.xrange(STREAM) if "_retry_count" in f]
    client.close()

    runs = executions(fleet.procs)
    twice = overlaps(runs, {p.popen.pid: p.died_at for p in fleet.procs if p.died_at is not None})
    done_runs = Counter(r.task for r in runs if r.outcome == "done")
    runs_of = Counter(r.task for r in runs)
    first_runs: dict[str, Execution] = {}
    for run in sorted(runs, key=lambda r: r.start):
        first_runs.setdefault(run.task, run)
    # Tasks the slow worker was first to run: they outlived MinIdleTime, their locks renewed.
    slow_pid = next(p.popen.pid for p in fleet.procs if p.role == "slow")
    slow_tasks = {t for t, r in first_runs.items() if r.pid == slow_pid and t in good}
    clean = [p for p in fleet.procs if p.died_at is None]
    total: Counter = Counter()
    for proc in clean:
        total.update(proc.stats)
    killed_done = sum(1 for r in runs if r.outcome == "done" and r.pid not in {p.popen.pid for p in clean})
    counts = (f"{TASKS} tasks + {POISON} poison in {chaos.seconds:.0f} s; {len(runs)} executions, "
              f"{sum(done_runs.values())} completions ({sum(c > 1 for c in done_runs.values())} tasks more "
              f"than once); {chaos.kills} workers killed ({chaos.mid_task} mid-task), the server once "
              f"(down {chaos.server_down_s:.1f} s); the slow worker ran {len(slow_tasks)} tasks; "
              f"requeued entries {len(requeued)}, DLQ {len(dead)}; counters of the {len(clean)} clean "
              f"exits: {dict(total)}")
    print("\n" + counts)

    assert set(done_runs) == good, f"tasks never completed: {sorted(good - set(done_runs))[:20]}; {counts}"
    assert not twice, f"ran in two workers at once: {twice[:5]}; {counts}"
    assert total["locks_lost"] == 0, counts
    assert slow_tasks and all(runs_of[t] == 1 for t in slow_tasks), f"a slow task ran again: {counts}"
    assert {f["_original_id"] for _, f in dead} == poison_ids, counts
    assert all(f["_retry_count"] == str(MAX_RETRIES + 1) and f["_last_error"] for _, f in dead), dead

    # The metrics agree with what happened.
    for proc in clean:
        check_metrics(proc, runs)
    assert total["recovery_dlq"] == len(dead) == POISON, counts
    assert sum(total[c] for c in REQUEUE_COUNTERS) == len(requeued) > 0, counts
    assert total["recovery_scan_skipped_alive"] > 0, counts
    # The fast path does most of the work, after the server's restart too (which forgot the
    # notify-keyspace-events setting; the listeners turn it back on).
    assert total["recovery_keyspace_requeued"] > total["recovery_scan_requeued"], counts
    assert total["tasks_done"] + killed_done >= TASKS, counts
