#!/usr/bin/env python3
"""The reliable consumer (sluice.worker, run as `sluice-worker`) beside taskiq-redis's
RedisStreamBroker and faststream's Redis stream subscriber, on one redis-server.

    python bench/worker_bench.py            # --tasks 20000, 10 recovery trials, 5 slow tasks
    python bench/worker_bench.py --quick    # ~2 minutes

1. Throughput: tasks per second through a no-op handler, one worker process and four,
   each library with its defaults. The workers start first and wait; the tasks (the
   library's own message, made by its producer once, copied) are then added pipelined,
   and the clock runs from the first XADD until the group has read and acknowledged
   every task (XINFO GROUPS, polled every 2 ms): the same measure for all three.
2. Recovery latency: two workers; a task starts in one, which is killed with kill -9;
   how long until the task starts in another. Ours by the fast path (lock-key expired
   events; lock TTL 1 s), ours by the scan alone (no listener; MinIdleTime 2 s, a scan
   every 1 s), taskiq-redis by its reclaim (XAUTOCLAIM with idle_timeout 2 s, which it
   runs after each read that returned something: a trickle of no-op tasks, 10 a second,
   runs for every library so taskiq's reclaim gets its chance).
3. Duplicates: tasks running 3 s, longer than the reclaim idle time (1 s: our
   MinIdleTime, taskiq's idle_timeout, faststream's min_idle_time on a second, reclaiming
   subscriber), two workers, with the trickle; a duplicate is a second start of a task
   whose first owner is alive.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable, Optional

import _common as c

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = ("sluice", "taskiq", "faststream")
STREAM, GROUP = "bench:tasks", "bench"
STARTS = "bench:starts"            # each recorded handler start: task, consumer, t
TRICKLE_S = 0.1
TIMEOUT_S = 60.0
SLOW_TASK_S = 3.0
VICTIM_S = 8.0                     # the killed worker's task: running long after recovery
# Our settings per scenario (seconds); the others' idle times match ours.
FAST_PATH = {"lock_ttl": 1.0, "min_idle_time": 60.0, "reconciliation_interval": 60.0, "listener": True}
SCAN_ONLY = {"lock_ttl": 1.0, "min_idle_time": 2.0, "reconciliation_interval": 1.0, "listener": False}
SLOW = {"lock_ttl": 0.5, "min_idle_time": 1.0, "reconciliation_interval": 0.5, "listener": True}
SCAN_JITTER = 0.1                  # RecoveryConfig's default


# -- the handlers, one per library: a no-op unless the task has a name -------------------

def _record(client: Any, task: str) -> Any:
    return client.xadd(STARTS, {"task": task, "consumer": os.environ["BENCH_CONSUMER"], "t": repr(time.time())})


_sync_client = None


def handle_sluice(task) -> None:
    """Run by `sluice-worker worker_bench:handle_sluice` (decoded fields)."""
    global _sync_client
    name = task.fields.get("task", "noop")
    if name == "noop":
        return
    if _sync_client is None:
        import redis
        _sync_client = redis.Redis.from_url(os.environ["BENCH_URL"])
    _record(_sync_client, name)
    time.sleep(float(task.fields.get("sleep", 0)))


async def _handle_async(client: Any, task: str, sleep: float) -> None:
    if task != "noop":
        await _record(client, task)
        await asyncio.sleep(sleep)


def taskiq_broker(url: str, consumer: str, idle_ms: Optional[int]):
    """The RedisStreamBroker and its one task, `job`, as both sides build them."""
    from taskiq_redis import RedisStreamBroker
    broker = RedisStreamBroker(url, queue_name=STREAM, consumer_group_name=GROUP, consumer_name=consumer,
                               consumer_id="0", **({"idle_timeout": idle_ms} if idle_ms else {}))
    state: dict = {}

    @broker.task(task_name="job")
    async def job(task: str = "noop", sleep: float = 0.0) -> None:
        if "client" not in state:
            import redis.asyncio
            state["client"] = redis.asyncio.Redis.from_url(url)
        await _handle_async(state["client"], task, sleep)

    return broker, job


async def run_taskiq(url: str, consumer: str, idle_ms: Optional[int], stop: asyncio.Event) -> None:
    from taskiq.receiver import Receiver
    broker, _ = taskiq_broker(url, consumer, idle_ms)
    broker.is_worker_process = True
    await broker.startup()
    await Receiver(broker, run_startup=False, max_async_tasks=100).listen(stop)
    await broker.shutdown()


async def run_faststream(url: str, consumer: str, idle_ms: Optional[int], stop: asyncio.Event) -> None:
    """A stream subscriber (XREADGROUP, 100 at a time) and, with idle_ms, the reclaiming one
    faststream offers (XAUTOCLAIM with min_idle_time) for the same group and consumer."""
    import redis.asyncio
    from faststream.redis import RedisBroker, StreamSub
    broker = RedisBroker(url)
    client = redis.asyncio.Redis.from_url(url)

    async def handle(body: dict) -> None:
        await _handle_async(client, body.get("task", "noop"), float(body.get("sleep", 0)))

    broker.subscriber(stream=StreamSub(STREAM, group=GROUP, consumer=consumer, max_records=100,
                                       polling_interval=1000))(handle)
    if idle_ms:
        async def reclaim(body: dict) -> None:
            await handle(body)
        broker.subscriber(stream=StreamSub(STREAM, group=GROUP, consumer=consumer, min_idle_time=idle_ms,
                                           polling_interval=100))(reclaim)
    await broker.start()
    await stop.wait()
    await broker.stop()


def child(lib: str, url: str, consumer: str, idle_ms: int) -> None:
    """`worker_bench.py child LIB URL CONSUMER IDLE_MS`: one taskiq or faststream worker
    until SIGTERM."""
    os.environ.update(BENCH_CONSUMER=consumer, BENCH_URL=url)

    async def main() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        runner = run_taskiq if lib == "taskiq" else run_faststream
        await runner(url, consumer, idle_ms or None, stop)

    asyncio.run(main())


# -- the parent: producers, worker processes, measurements --------------------------------

def produce(lib: str, url: str, stream: str, tasks: list[dict]) -> None:
    """Adds `tasks` ({"task": name, "sleep": s}) to `stream` with the library's own producer."""
    if lib == "sluice":
        import redis
        client = redis.Redis.from_url(url)
        for task in tasks:
            client.xadd(stream, task)
        client.close()
        return

    async def run() -> None:
        if lib == "taskiq":
            broker, job = taskiq_broker(url, "producer", None)
            broker.queue_name = stream
            await broker.startup()
            for task in tasks:
                await job.kiq(**task)
            await broker.shutdown()
        else:
            from faststream.redis import RedisBroker
            broker = RedisBroker(url)
            await broker.connect()
            for task in tasks:
                await broker.publish(task, stream=stream)
            await broker.stop()

    asyncio.run(run())


def message_of(lib: str, srv: c.RedisServer, task: dict) -> dict:
    """The fields the library's producer writes for `task` (made once, then copied)."""
    proto = f"bench:proto:{lib}"
    produce(lib, url_of(srv), proto, [task])
    client = srv.client()
    [(_, fields)] = client.xrange(proto)
    client.delete(proto)
    return fields


def url_of(srv: c.RedisServer) -> str:
    return f"redis://127.0.0.1:{srv.port}/0"


def start_worker(lib: str, srv: c.RedisServer, consumer: str, ours: Optional[dict] = None,
                 idle_ms: int = 0) -> subprocess.Popen:
    env = dict(os.environ, BENCH_CONSUMER=consumer, BENCH_URL=url_of(srv),
               PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), c.REPO) if p))
    if lib == "sluice":
        flags = []
        if ours:
            flags = ["--lock-ttl", str(ours["lock_ttl"]), "--min-idle-time", str(ours["min_idle_time"]),
                     "--reconciliation-interval", str(ours["reconciliation_interval"]),
                     "--keyspace-listener" if ours["listener"] else "--no-keyspace-listener"]
        argv = ["-m", "sluice.worker.cli", "worker_bench:handle_sluice", "--path", HERE, "--url", url_of(srv),
                "--stream", STREAM, "--group", GROUP, "--consumer", consumer, "--log-level", "WARNING", *flags]
    else:
        argv = [os.path.join(HERE, "worker_bench.py"), "child", lib, url_of(srv), consumer, str(idle_ms)]
    return subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def wait_until(condition: Callable[[], bool], what: str, procs: list[subprocess.Popen] = (),
               timeout: float = TIMEOUT_S, pause: float = 0.002) -> float:
    """Polls `condition`; the monotonic time it first held. Raises when a worker died."""
    deadline = time.monotonic() + timeout
    while not condition():
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"a worker exited ({proc.returncode}) waiting for {what}: "
                                   f"{proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(pause)
    return time.monotonic()


def fresh(srv: c.RedisServer) -> Any:
    client = srv.client(decode_responses=True)
    client.flushall()
    client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    return client


def blocked(client: Any) -> int:
    """Clients blocked in a read: workers that started and wait for tasks."""
    return client.info("clients")["blocked_clients"]


def group_state(client: Any) -> tuple[int, int]:
    [info] = client.xinfo_groups(STREAM)
    return info["entries-read"] or 0, info["pending"]


def throughput(lib: str, srv: c.RedisServer, processes: int, tasks: int) -> float:
    """Tasks per second through `processes` workers of `lib` (see the module docstring)."""
    client = fresh(srv)
    message = message_of(lib, srv, {"task": "noop", "sleep": 0})
    procs = [start_worker(lib, srv, f"{lib}-{n}") for n in range(processes)]
    try:
        wait_until(lambda: blocked(client) >= processes, "the workers to read", procs, pause=0.05)
        raw = srv.client()
        started = time.monotonic()
        for first in range(0, tasks, 1000):
            pipe = raw.pipeline(transaction=False)
            for _ in range(min(1000, tasks - first)):
                pipe.xadd(STREAM, message)
            pipe.execute()
        ended = wait_until(lambda: group_state(client) == (tasks, 0), f"{tasks} tasks to be acknowledged", procs)
        return tasks / (ended - started)
    finally:
        stop_workers(procs)


class Trickle:
    """No-op tasks added every TRICKLE_S while it runs (taskiq reclaims only after a read
    that returned something)."""

    def __init__(self, srv: c.RedisServer, message: dict) -> None:
        self._client, self._message = srv.client(), message
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(TRICKLE_S):
            self._client.xadd(STREAM, self._message)

    def __enter__(self) -> "Trickle":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def starts_of(client: Any, task: str) -> list[tuple[str, float]]:
    """(consumer, time.time()) of each recorded start of `task`."""
    return [(f["consumer"], float(f["t"])) for _, f in client.xrange(STARTS) if f["task"] == task]


def recovery(lib: str, srv: c.RedisServer, trials: int, ours: Optional[dict], idle_ms: int) -> list[tuple]:
    """Per trial (latency from the kill, latency from when the scan could act): the
    owner of a running task is killed with kill -9, and its replacement started."""
    client = fresh(srv)
    noop = message_of(lib, srv, {"task": "noop", "sleep": 0})
    procs = {f"{lib}-{n}": start_worker(lib, srv, f"{lib}-{n}", ours, idle_ms) for n in range(2)}
    results = []
    try:
        wait_until(lambda: blocked(client) >= len(procs), "the workers to read", list(procs.values()), pause=0.05)
        with Trickle(srv, noop):
            for trial in range(trials):
                name = f"victim-{trial}"
                produce(lib, url_of(srv), STREAM, [{"task": name, "sleep": VICTIM_S}])
                wait_until(lambda: starts_of(client, name), f"{name} to start", list(procs.values()), pause=0.005)
                [(owner, began)] = starts_of(client, name)
                procs[owner].kill()
                killed = time.time()
                procs.pop(owner).wait()
                wait_until(lambda: len(starts_of(client, name)) > 1, f"{name} to run elsewhere",
                           list(procs.values()), pause=0.005)
                again = starts_of(client, name)[1][1]
                eligible = (max(began + ours["min_idle_time"], killed + ours["lock_ttl"])
                            if ours and not ours["listener"] else None)
                results.append((again - killed, None if eligible is None else again - eligible))
                replacement = f"{lib}-r{trial}"
                procs[replacement] = start_worker(lib, srv, replacement, ours, idle_ms)
    finally:
        stop_workers(list(procs.values()))
    return results


def duplicates(lib: str, srv: c.RedisServer, slow_tasks: int) -> tuple[int, int]:
    """(tasks run more than once, extra starts) with tasks longer than the reclaim idle time."""
    client = fresh(srv)
    noop = message_of(lib, srv, {"task": "noop", "sleep": 0})
    idle_ms = int(SLOW["min_idle_time"] * 1000)
    procs = [start_worker(lib, srv, f"{lib}-{n}", SLOW, idle_ms) for n in range(2)]
    try:
        wait_until(lambda: blocked(client) >= 2, "the workers to read", procs, pause=0.05)
        with Trickle(srv, noop):
            produce(lib, url_of(srv), STREAM, [{"task": f"slow-{n}", "sleep": SLOW_TASK_S}
                                               for n in range(slow_tasks)])
            time.sleep(SLOW_TASK_S * 2 + 1)     # every first run ends, every reclaim had its chance
    finally:
        stop_workers(procs)
    runs = Counter(f["task"] for _, f in client.xrange(STARTS))
    return sum(1 for n in runs.values() if n > 1), sum(n - 1 for n in runs.values())


# -- the report -------------------------------------------------------------------------

def available(lib: str) -> Optional[str]:
    """None when the library can run here, else why not."""
    module = {"sluice": "sluice.worker", "taskiq": "taskiq_redis", "faststream": "faststream.redis"}[lib]
    try:
        __import__(module)
    except ImportError as error:
        return f"n/a ({error}; pip install '.[bench]')"
    return None


def main(argv: Optional[list] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["child"]:
        child(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer tasks and trials (~2 minutes)")
    ap.add_argument("--tasks", type=int, default=None, help="tasks per throughput run (20000; quick 3000)")
    ap.add_argument("--trials", type=int, default=None, help="kill -9 trials per recovery path (10; quick 3)")
    ap.add_argument("--slow-tasks", type=int, default=None, help="slow tasks in the duplicate case (5; quick 2)")
    ap.add_argument("--rounds", type=int, default=None, help="throughput runs per cell, median (3; quick 1)")
    args = ap.parse_args(argv)
    c.quick_defaults(args, tasks=(3000, 20000), trials=(3, 10), slow_tasks=(2, 5), rounds=(1, 3))
    c.header("worker_bench", args)
    missing = {lib: available(lib) for lib in LIBS}
    with c.redis_server() as srv:
        if srv is None:
            return 0
        print(f"redis-server {srv.version} on port {srv.port}", flush=True)
        libs = [lib for lib in LIBS if missing[lib] is None]
        report_throughput(srv, libs, missing, args)
        report_recovery(srv, missing, args)
        report_duplicates(srv, libs, missing, args)
    return 0


def report_throughput(srv: c.RedisServer, libs: list[str], missing: dict, args) -> None:
    rates: dict[tuple[str, int], float] = {}
    for processes in (1, 4):
        samples: dict[str, list[float]] = {lib: [] for lib in libs}
        for _ in range(args.rounds):            # rounds alternate the libraries
            for lib in libs:
                samples[lib].append(throughput(lib, srv, processes, args.tasks))
        for lib in libs:
            rates[(lib, processes)] = c.median(samples[lib])
    rows = []
    for lib in LIBS:
        if missing[lib]:
            rows.append([lib, missing[lib], "", "", "", ""])
            continue
        one, four = rates[(lib, 1)], rates[(lib, 4)]
        ours = [rates[("sluice", n)] / rates[(lib, n)] for n in (1, 4)]
        rows.append([lib, c.fmt_int(one), c.fmt_int(four), c.fmt_ratio(ours[0]), c.fmt_ratio(ours[1]),
                     "" if lib == "sluice" else c.verdict(min(ours) >= 1)])
    c.print_table(f"1. no-op tasks per second, {args.tasks:,} tasks, median of {args.rounds}",
                  ["library", "1 process", "4 processes", "sluice / it, 1", "sluice / it, 4",
                   "sluice >= 1x"], rows)


def report_recovery(srv: c.RedisServer, missing: dict, args) -> None:
    cases = [("sluice fast path (lock TTL 1 s)", "sluice", FAST_PATH, 0,
              f"p99 <= lock TTL + 1 s = {FAST_PATH['lock_ttl'] + 1:g} s", FAST_PATH["lock_ttl"] + 1, 0),
             ("sluice scan alone (MinIdle 2 s, every 1 s)", "sluice", SCAN_ONLY, 0,
              "after eligible: p99 <= one interval (+jitter)",
              SCAN_ONLY["reconciliation_interval"] * (1 + SCAN_JITTER), 1),
             ("taskiq-redis reclaim (idle_timeout 2 s)", "taskiq", None, 2000, "", None, 0)]
    rows = []
    fast_median = None
    for title, lib, ours, idle_ms, target, bound, column in cases:
        if missing[lib]:
            rows.append([title, missing[lib], "", "", "", "", ""])
            continue
        results = recovery(lib, srv, args.trials, ours, idle_ms)
        kill = c.summary([r[0] for r in results])
        judged = c.summary([r[column] for r in results])
        if lib == "sluice" and ours is FAST_PATH:
            fast_median = kill["median"]
        ok = None if bound is None else judged["p99"] <= bound
        eligible = c.summary([r[1] for r in results]) if column else None
        rows.append([title, "%.3f" % kill["median"], "%.3f" % kill["p99"], "%.3f" % kill["max"],
                     "" if eligible is None else "%.3f" % eligible["p99"],
                     c.fmt_ratio(kill["median"] / fast_median) if fast_median else "",
                     f"{target} {c.verdict(ok)}" if target else ""])
    c.print_table(f"2. recovery: seconds from kill -9 of a task's worker to the task starting in another, "
                  f"{args.trials} trials",
                  ["path", "median", "p99", "max", "p99 after eligible", "vs our fast path", "target"], rows)


def report_duplicates(srv: c.RedisServer, libs: list[str], missing: dict, args) -> None:
    rows = []
    for lib in LIBS:
        if missing[lib]:
            rows.append([lib, missing[lib], "", ""])
            continue
        tasks, extra = duplicates(lib, srv, args.slow_tasks)
        target = c.verdict(extra == 0) + " (must be 0)" if lib == "sluice" else ""
        rows.append([lib, f"{tasks} of {args.slow_tasks}", str(extra), target])
    c.print_table(f"3. duplicates: {args.slow_tasks} tasks of {SLOW_TASK_S:g} s, reclaim idle time "
                  f"{SLOW['min_idle_time']:g} s, two live workers",
                  ["library", "tasks run twice or more", "extra runs", "target"], rows)


if __name__ == "__main__":
    sys.exit(main())
