"""The example pipeline in one command (`make pipeline-demo`): a fresh persistent Sluice
server, the page-view generator, the Spark totals job, the consumer group and the
`sluice-worker` processes alerting on totals, run for a bounded time, then a count of
what flowed through each stage, checked for agreement.

    python -m examples.demo --seconds 60 --rate 500 --key user

Agreement, checked against the server's own streams once everything has settled:
every produced event is in `events` and was read by Spark exactly once; the windows the
watermark closed are in `totals` exactly once each, and their counts and amounts equal
the ones recomputed here from `events` (so the sum of the window counts equals the
number of events inside closed windows); the consumer group acknowledged every total;
the workers handled every total, and `alerts` holds exactly one alert per total whose
average is at least --alert-average, with nothing dead-lettered.
The last line is `agreement: OK ...` (exit 0) or `agreement: FAILED ...` (exit 1).
Everything started here (server, Spark, generator, consumer, workers) is stopped on the way out,
after a failure or Ctrl-C too."""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Callable, Dict, List, Optional, Tuple

import redis

from examples.alerts import ALERTS, DEFAULT_AVERAGE, is_alert
from examples.consumer import ensure_group
from examples.processes import ServerProcess, stop_child
from examples.totals_job import JOB_GROUP, KEYS, start_totals
from sluice.spark.local import local_spark
from sluice.worker import dlq_key

EVENTS, TOTALS, GROUP = "events", "totals", "dashboard"
ALERTS_GROUP = "alerts"
SETTLE_TIMEOUT_S = 120.0
WindowKey = Tuple[str, int]
Total = Tuple[int, Decimal]


class Child:
    """A pipeline stage run as its own Python process; its output is echoed with a
    prefix and its last line kept (the stage's count). It runs in its own process group,
    so a Ctrl-C reaches only the demo, which then stops every stage in order."""

    def __init__(self, name: str, module: str, *args: str, env: Optional[dict] = None,
                 with_log: bool = False) -> None:
        """with_log: echo its stderr too (a sluice-worker's log, where it reports)."""
        self.name = name
        self.last_line = ""
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", module, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT if with_log else None,
                                     text=True, start_new_session=True, env=env)
        self._echo = threading.Thread(target=self._pump, daemon=True)
        self._echo.start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            # echoed before it becomes the last line: a stage whose count was read has
            # had every line of its output printed
            print(f"{self.name:>9} | {line.strip()}", flush=True)
            self.last_line = line.strip()

    def count(self, word: str, timeout: float) -> int:
        """Waits for the process to end; the N of its final `word N` line."""
        self.proc.wait(timeout)
        self._echo.join(30)
        verb, _, number = self.last_line.partition(" ")
        if self.proc.returncode != 0 or verb != word:
            raise self._failed()
        return int(number)

    def stopped_stats(self, timeout: float) -> Dict[str, int]:
        """Waits for a sluice-worker to end; the counts of its last line (`stopped: k=v ...`)."""
        self.proc.wait(timeout)
        self._echo.join(30)
        _, found, counts = self.last_line.partition("stopped: ")
        if self.proc.returncode != 0 or not found:
            raise self._failed()
        return {name: int(value) for name, value in (pair.split("=") for pair in counts.split())}

    def ensure_running(self) -> None:
        if self.proc.poll() is not None:
            raise self._failed()

    def _failed(self) -> RuntimeError:
        return RuntimeError(f"the {self.name} exited with status {self.proc.returncode} "
                            f"(last line {self.last_line!r})")

    def stop(self) -> None:
        stop_child(self.proc)


class Interrupts:
    """Once Spark runs, Ctrl-C and SIGTERM are only noted, and raised as KeyboardInterrupt
    at the demo's next wait: raised inside a call into the JVM (as PySpark's own SIGINT
    handler does), they leave the gateway broken and the shutdown noisy."""

    signalled: Optional[int] = None

    @classmethod
    def defer(cls) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, cls._note)

    @classmethod
    def _note(cls, signum: int, _frame: object) -> None:
        cls.signalled = signum

    @classmethod
    def check(cls) -> None:
        if cls.signalled is not None:
            raise KeyboardInterrupt


def wait_for(condition: Callable[[], bool], timeout: float, what: str,
             check: Callable[[], None] = lambda: None) -> None:
    """Polls `condition` until it holds; `check` raises if a stage has died."""
    deadline = time.monotonic() + timeout
    while not condition():
        Interrupts.check()
        check()
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


def entries(client: redis.Redis, stream: str) -> List[Dict[str, str]]:
    """Every entry's fields, decoded, read in XRANGE pages."""
    out: List[Dict[str, str]] = []
    start = "-"
    while True:
        page = client.xrange(stream, start, "+", count=10_000)
        out.extend({k.decode(): v.decode() for k, v in fields.items()} for _, fields in page)
        if len(page) < 10_000:
            return out
        start = "(" + page[-1][0].decode()


def expected_totals(events: List[Dict[str, str]], key: str, window_ms: int,
                    watermark_ms: int) -> Dict[WindowKey, Total]:
    """The totals the job must have written: per key per window, for windows that end
    at or before the watermark (append mode emits exactly those)."""
    totals: Dict[WindowKey, Total] = {}
    for event in events:
        ts = int(event["ts"])
        start = ts - ts % window_ms
        if start + window_ms <= watermark_ms:
            count, amount = totals.get((event[key], start), (0, Decimal(0)))
            totals[(event[key], start)] = (count + 1, amount + Decimal(event["amount"]))
    return totals


def written_totals(totals: List[Dict[str, str]], key: str) -> Counter:
    """(key, window start, events, amount) of each entry of `totals`, counted (a
    window written twice shows as a count of 2)."""
    return Counter((t[key], int(t["window_start"]), int(t["events"]), Decimal(t["amount"]))
                   for t in totals)


@dataclass
class Report:
    """What each stage counted, and what disagreed."""

    rows: List[Tuple[str, str]] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    closed_events: int = 0

    def add(self, stage: str, value: object) -> None:
        self.rows.append((stage, f"{value:,}" if isinstance(value, int) else str(value)))

    def expect(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)

    def print(self) -> None:
        width = max(len(stage) for stage, _ in self.rows)
        print("\nwhat flowed through each stage")
        for stage, value in self.rows:
            print(f"  {stage:<{width}}  {value:>14}")


def epoch_ms(iso: Optional[str]) -> Optional[int]:
    """Spark's progress timestamps (ISO 8601, UTC) as epoch milliseconds."""
    if not iso:
        return None
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def clock(ms: Optional[int]) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%H:%M:%S") if ms else "none"


@dataclass
class SparkCounts:
    """What the Spark job reported: events read, micro-batches run, the last watermark."""

    read: int = 0
    batches: int = 0
    watermark_ms: Optional[int] = None


class SparkWatch(SparkCounts):
    """Follows the query's progress: prints each new micro-batch, adds up the rows read,
    and raises as soon as the query has died."""

    def __init__(self, query) -> None:
        super().__init__()
        self.query = query

    def poll(self) -> None:
        if not self.query.isActive:
            raise RuntimeError(f"the Spark query stopped: {self.query.exception()}")
        for progress in self.query.recentProgress[self.batches:]:
            self.batches += 1
            self.read += progress.numInputRows
            self.watermark_ms = epoch_ms(progress.eventTime.get("watermark"))
            written = progress.sink.numOutputRows
            print(f"{'spark':>9} | batch {progress.batchId}: read {progress.numInputRows:,} events"
                  + (f", wrote {written:,} totals" if written >= 0 else "")
                  + f", watermark {clock(self.watermark_ms)}", flush=True)


def group_info(client: redis.Redis, stream: str, group: str) -> dict:
    """XINFO GROUPS' line for `group` ({} when the stream or the group is missing)."""
    try:
        groups = client.xinfo_groups(stream)
    except redis.ResponseError:
        return {}
    return next((g for g in groups if g["name"].decode() == group), {})


def group_done(client: redis.Redis, stream: str, group: str) -> bool:
    """The group has read and acknowledged every entry of the stream."""
    info = group_info(client, stream, group)
    return info.get("pending") == 0 and info.get("entries-read") == client.xlen(stream)


def start_workers(url: str, count: int, alert_average: Decimal) -> List[Child]:
    """`sluice-worker` processes running examples.alerts on the totals."""
    env = dict(os.environ, ALERTS_URL=url, ALERT_AVERAGE=str(alert_average))
    return [Child(f"worker-{n}", "sluice.worker.cli", "examples.alerts:handle",
                  "--url", url, "--stream", TOTALS, "--group", ALERTS_GROUP,
                  "--consumer", f"alerts-{n}", "--concurrency", "2", env=env, with_log=True)
            for n in range(1, count + 1)]


@dataclass
class WorkerCounts:
    """What the worker stage reported: its processes, the totals they handled, the rule."""

    processes: int
    handled: int
    alert_average: Decimal


def run(args: argparse.Namespace, stack: contextlib.ExitStack, report: Report) -> None:
    server = ServerProcess(["--appendonly", "yes", "--appendfsync", "everysec"],
                           workdir=args.dir, loglevel="notice", preexec_fn=os.setpgrp)
    stack.callback(server.close)
    server.start()
    url = f"redis://127.0.0.1:{server.port}/0"
    client = redis.Redis.from_url(url)
    print(f"sluice-server on {url}, data in {server.dir}", flush=True)
    ensure_group(client, TOTALS, GROUP)
    ensure_group(client, TOTALS, ALERTS_GROUP)
    consumer = Child("consumer", "examples.consumer", "--url", url, "--stream", TOTALS,
                     "--group", GROUP)
    stack.callback(consumer.stop)
    workers = start_workers(url, args.workers, args.alert_average)
    for worker in workers:
        stack.callback(worker.stop)

    spark = local_spark("sluice-pipeline-demo")
    stack.callback(spark.stop)
    Interrupts.defer()
    checkpoint = stack.enter_context(tempfile.TemporaryDirectory(prefix="totals-checkpoint-"))
    query = start_totals(spark, url, checkpoint, args.key, args.window, args.watermark,
                         args.trigger, EVENTS, TOTALS)
    stack.callback(lambda: query.isActive and query.stop())
    print(f"Spark job started: {args.key} totals per {args.window} s event-time window, "
          f"watermark {args.watermark} s, trigger every {args.trigger} s", flush=True)
    watch = SparkWatch(query)

    generator = Child("generator", "examples.generator", "--url", url,
                      "--stream", EVENTS, "--rate", str(args.rate),
                      "--seconds", str(args.seconds), "--max-lateness", str(args.max_lateness))
    stack.callback(generator.stop)
    wait_for(lambda: generator.proc.poll() is not None, args.seconds + SETTLE_TIMEOUT_S,
             "the generator", watch.poll)
    produced = generator.count("produced", 10)
    # The final watermark is the latest event time minus the delay; the batch that emits
    # the windows it closes runs after the last data (a batch without input), and its
    # progress is reported once its totals are written. The job's commitGroup moves when
    # Spark plans the trigger after a batch: when late events come last, the batch that
    # reads them may already run at the final watermark, so wait for that move too.
    final_mark = max(int(event["ts"]) for event in entries(client, EVENTS)) - args.watermark * 1000
    wait_for(lambda: watch.read >= produced and watch.watermark_ms == final_mark
             and group_info(client, EVENTS, JOB_GROUP).get("lag") == 0,
             SETTLE_TIMEOUT_S, f"Spark to read all {produced:,} events, reach the final "
             f"watermark {clock(final_mark)} and commit them to {JOB_GROUP}", watch.poll)
    query.stop()
    wait_for(lambda: group_done(client, TOTALS, GROUP), SETTLE_TIMEOUT_S,
             "the consumer group to acknowledge every total")
    wait_for(lambda: group_done(client, TOTALS, ALERTS_GROUP), SETTLE_TIMEOUT_S,
             f"the workers to handle every total (group {ALERTS_GROUP})",
             lambda: [worker.ensure_running() for worker in workers])
    consumer.stop()
    consumed = consumer.count("consumed", 10)
    for worker in workers:                  # all at once: each takes up to its read's block
        worker.proc.send_signal(signal.SIGTERM)
    handled = sum(worker.stopped_stats(10)["tasks_done"] for worker in workers)
    check(client, report, args.key, args.window, produced, watch, consumed,
          WorkerCounts(len(workers), handled, args.alert_average))


def check(client: redis.Redis, report: Report, key: str, window_seconds: int, produced: int,
          spark: SparkCounts, consumed: int, workers: WorkerCounts) -> None:
    """Each stage's count, from the server's streams, and whether they agree."""
    events = entries(client, EVENTS)
    expected = expected_totals(events, key, window_seconds * 1000, spark.watermark_ms or 0)
    written = written_totals(entries(client, TOTALS), key)
    in_closed = report.closed_events = sum(count for count, _ in expected.values())
    counted = sum(events_ * times for (_, _, events_, _), times in written.items())
    windows = sum(written.values())
    report.add("events produced (generator)", produced)
    report.add(f"events in stream {EVENTS} (XLEN)", len(events))
    report.add(f"events read by Spark ({spark.batches} batches)", spark.read)
    job_lag = group_info(client, EVENTS, JOB_GROUP).get("lag")
    report.add(f"  its commitGroup {JOB_GROUP}: lag (XINFO GROUPS)", str(job_lag))
    report.add("final watermark (UTC)", clock(spark.watermark_ms))
    report.add("events in windows closed by it", in_closed)
    report.add(f"windows written to {TOTALS}", windows)
    report.add("  sum of their event counts", counted)
    idmp_added = client.xinfo_stream(TOTALS)["iids-added"] if client.exists(TOTALS) else 0
    report.add("  added with XADD IDMP (XINFO STREAM iids-added)", idmp_added)
    report.add(f"totals consumed (group {GROUP})", consumed)
    report.expect(len(events) == produced, f"{produced} events produced, {len(events)} in {EVENTS}")
    report.expect(spark.read == produced, f"{produced} events produced, Spark read {spark.read}")
    report.expect(job_lag == 0, f"XINFO GROUPS {EVENTS} shows group {JOB_GROUP} with lag {job_lag}, not 0")
    report.expect(in_closed > 0, "the watermark closed no window: run longer (--seconds)")
    duplicates = sum(times - 1 for times in written.values())
    report.expect(duplicates == 0, f"{duplicates} windows written more than once")
    want = Counter((k, start, count, amount) for (k, start), (count, amount) in expected.items())
    report.expect(written == want, f"totals differ from the events: {sum((want - written).values())} "
                                   f"windows missing or wrong, {sum((written - want).values())} unexpected")
    report.expect(counted == in_closed, f"the window counts sum to {counted}, "
                                        f"the closed windows hold {in_closed} events")
    report.expect(consumed == windows, f"{windows} totals written, {consumed} consumed")
    report.expect(idmp_added == windows, f"{windows} totals written, {idmp_added} of them with IDMP")
    check_alerts(client, report, windows, workers)


def check_alerts(client: redis.Redis, report: Report, windows: int, workers: WorkerCounts) -> None:
    """The worker stage: every total handled, one alert for each total that deserves one."""
    due = sorted(total_id.decode() for total_id, fields in client.xrange(TOTALS)
                 if is_alert({k.decode(): v.decode() for k, v in fields.items()}, workers.alert_average))
    alerted = Counter(alert["total"] for alert in entries(client, ALERTS))
    dead = client.xlen(dlq_key(TOTALS))
    report.add(f"totals handled by sluice-worker ({workers.processes} processes)", workers.handled)
    report.add(f"alerts written (average >= {workers.alert_average})", sum(alerted.values()))
    report.add("  totals dead-lettered", dead)
    report.expect(workers.handled == windows,
                  f"{windows} totals written, {workers.handled} handled by the workers")
    repeated = sum(times - 1 for times in alerted.values())
    report.expect(repeated == 0, f"{repeated} totals alerted more than once")
    report.expect(sorted(alerted) == due, f"{len(due)} totals deserve an alert, {len(alerted)} have one, "
                                          f"{len(set(due) ^ set(alerted))} differ")
    report.expect(dead == 0, f"{dead} totals in the dead-letter stream")


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the generator runs")
    ap.add_argument("--rate", type=float, default=500.0, help="events per second")
    ap.add_argument("--key", choices=KEYS, default="user", help="what the totals are per")
    ap.add_argument("--window", type=int, default=10, help="event-time window, seconds")
    ap.add_argument("--watermark", type=int, default=5, help="allowed lateness, seconds")
    ap.add_argument("--max-lateness", type=float, default=2.0,
                    help="how far the generator's event times lag the clock, seconds")
    ap.add_argument("--trigger", type=float, default=2.0, help="Spark trigger interval, seconds")
    ap.add_argument("--workers", type=int, default=2, help="sluice-worker processes alerting on totals")
    ap.add_argument("--alert-average", type=Decimal, default=DEFAULT_AVERAGE,
                    help="alert on windows whose views were worth at least this on average")
    ap.add_argument("--dir", default=None,
                    help="the server's data directory (default: a temporary one, removed)")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    if args.max_lateness >= args.watermark:
        ap.error("--max-lateness must be below --watermark, or Spark drops late events")
    if args.dir:
        os.makedirs(args.dir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # until Spark runs: see Interrupts
    report = Report()
    started = time.monotonic()
    try:
        with contextlib.ExitStack() as stack:
            run(args, stack, report)
    except KeyboardInterrupt:
        print("\ninterrupted: everything started here is stopped", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - any stage failing fails the demo, said in one line
        print(f"\n{type(exc).__name__}: {exc}", file=sys.stderr)
        report.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    if report.rows:
        report.print()
    elapsed = time.monotonic() - started
    if report.problems:
        print(f"agreement: FAILED after {elapsed:.0f} s: " + "; ".join(report.problems))
        return 1
    print(f"agreement: OK after {elapsed:.0f} s: every event read once, the window counts "
          f"sum to the {report.closed_events:,} events in closed windows, every total consumed "
          f"and handled by the workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
