"""The example pipeline (`make pipeline-demo`): its agreement check against hand-made
streams on a real server, and the whole demo, Spark included, in a short run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Optional

from decimal import Decimal

import pytest
import redis

from servers import ROOT, SluiceServer, checkout_env

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
from examples.alerts import ALERTS  # noqa: E402
from examples.demo import EVENTS, TOTALS, Report, SparkCounts, WorkerCounts, check  # noqa: E402
from sluice.worker import dlq_key  # noqa: E402
from examples.totals_job import JOB_GROUP  # noqa: E402

WINDOW_S = 10
W0 = 1_700_000_000_000  # a window start (a multiple of 10 s)
ALERT_AVERAGE = Decimal("1.50")     # of the totals below, u2's first window (2.00 a view)


def view(user: str, ts: int, amount: str) -> dict:
    return {"user": user, "page": "/", "amount": amount, "ts": str(ts)}


def total(user: str, start: int, events: int, amount: str) -> dict:
    return {"user": user, "window_start": str(start), "window_end": str(start + WINDOW_S * 1000),
            "events": str(events), "amount": amount}


@pytest.fixture
def streams():
    """A server holding five events: u1 twice and u2 once in the first window, u1 twice in
    the next, all read by the job's group; the caller adds the totals."""
    with SluiceServer(["--save", ""], loglevel="warning") as server:
        client = redis.Redis(port=server.port)
        for event in (view("u1", W0 + 5, "1.10"), view("u2", W0 + 900, "2.00"),
                      view("u1", W0 + 9_999, "0.90"), view("u1", W0 + 10_000, "5.00"),
                      view("u1", W0 + 12_000, "1.00")):
            client.xadd(EVENTS, event)
        client.xgroup_create(EVENTS, JOB_GROUP, "$", entries_read=5)
        yield client


def agreement(client: redis.Redis, watermark_ms: int, read: int = 5, consumed: int = 2,
              handled: Optional[int] = None) -> Report:
    report = Report()
    workers = WorkerCounts(2, consumed if handled is None else handled, ALERT_AVERAGE)
    check(client, report, "user", WINDOW_S, 5, SparkCounts(read, 3, watermark_ms), consumed, workers)
    return report


def write_total(client: redis.Redis, fields: dict) -> bytes:
    """A total as the demo's Spark sink writes it: XADD ... IDMP, an iid of its own."""
    pairs = [part for pair in fields.items() for part in pair]
    return client.execute_command("XADD", TOTALS, "IDMP", "demo-test", uuid.uuid4().hex, "*", *pairs)


def alert(client: redis.Redis, total_id: bytes) -> None:
    """What examples.alerts writes for the total `total_id` (its fields elided)."""
    client.xadd(ALERTS, {"total": total_id})


def test_closed_windows_totalled_exactly_agree(streams: redis.Redis) -> None:
    write_total(streams, total("u1", W0, 2, "2.00"))
    alert(streams, write_total(streams, total("u2", W0, 1, "2.00")))
    report = agreement(streams, W0 + WINDOW_S * 1000)  # closes the first window only
    assert report.problems == []
    assert report.closed_events == 3
    rows = dict(report.rows)
    assert rows["  sum of their event counts"] == "3"
    assert rows["totals handled by sluice-worker (2 processes)"] == "2"
    assert rows["alerts written (average >= 1.50)"] == "1"


def test_each_disagreement_is_named(streams: redis.Redis) -> None:
    write_total(streams, total("u1", W0, 2, "2.01"))        # a wrong amount
    first = write_total(streams, total("u2", W0, 1, "2.00"))
    streams.xadd(TOTALS, total("u2", W0, 1, "2.00"))        # a window written twice (no IDMP), not alerted
    alert(streams, first)
    alert(streams, first)                                    # alerted twice
    streams.xadd(dlq_key(TOTALS), {"total": "x"})
    fourth = streams.xrange(EVENTS)[3][0]
    streams.xgroup_setid(EVENTS, JOB_GROUP, fourth, entries_read=4)
    report = agreement(streams, W0 + WINDOW_S * 1000, read=4, consumed=2, handled=1)
    assert f"XINFO GROUPS {EVENTS} shows group {JOB_GROUP} with lag 1, not 0" in report.problems
    assert "5 events produced, Spark read 4" in report.problems
    assert "1 windows written more than once" in report.problems
    assert "totals differ from the events: 1 windows missing or wrong, 2 unexpected" in report.problems
    assert "the window counts sum to 4, the closed windows hold 3 events" in report.problems
    assert "3 totals written, 2 consumed" in report.problems
    assert "3 totals written, 1 handled by the workers" in report.problems
    assert "1 totals alerted more than once" in report.problems
    assert "2 totals deserve an alert, 1 have one, 1 differ" in report.problems
    assert "1 totals in the dead-letter stream" in report.problems
    assert "3 totals written, 2 of them with IDMP" in report.problems


def test_a_window_the_watermark_has_not_closed_must_not_be_written(streams: redis.Redis) -> None:
    write_total(streams, total("u1", W0, 2, "2.00"))
    alert(streams, write_total(streams, total("u2", W0, 1, "2.00")))
    alert(streams, write_total(streams, total("u1", W0 + WINDOW_S * 1000, 2, "6.00")))
    report = agreement(streams, W0 + 2 * WINDOW_S * 1000 - 1, consumed=3)
    assert report.problems == ["totals differ from the events: 0 windows missing or wrong, "
                               "1 unexpected",
                               "the window counts sum to 5, the closed windows hold 3 events"]
    assert agreement(streams, W0 + 2 * WINDOW_S * 1000, consumed=3).problems == []


def running_with(path: Path) -> list:
    """Command lines of live processes that mention `path` (what the demo left running)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(path) in cmdline:
            found.append(cmdline)
    return found


def test_demo_short_run_agrees_and_stops_everything(spark, tmp_path: Path) -> None:
    """The whole pipeline for 20 s (the `spark` fixture only makes sure Spark can run
    here; the demo starts its own)."""
    data = tmp_path / "data"
    done = subprocess.run([sys.executable, "-m", "examples.demo", "--seconds", "20",
                           "--rate", "200", "--window", "5", "--watermark", "3", "--dir", str(data)],
                          cwd=ROOT, env=checkout_env(), capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr[-5000:]
    assert done.returncode == 0, output
    assert done.stdout.strip().splitlines()[-1].startswith("agreement: OK"), output
    produced = re.search(r"events produced \(generator\)\s+([\d,]+)", done.stdout)
    assert produced and int(produced.group(1).replace(",", "")) == 4000, output
    assert re.search(r"consumer \| total \d+-\d+ \[", done.stdout), output
    # The worker stage: two sluice-worker processes stopped cleanly, having handled totals.
    handled = [int(n) for n in re.findall(r"worker-\d \|.*stopped: tasks_done=(\d+)", done.stdout)]
    assert len(handled) == 2 and sum(handled) > 0, output
    alerts = re.search(r"alerts written \(average >= [\d.]+\)\s+([\d,]+)", done.stdout)
    assert alerts and int(alerts.group(1).replace(",", "")) > 0, output
    assert (data / "appendonlydir").is_dir()      # the server was persistent
    assert running_with(data) == []
