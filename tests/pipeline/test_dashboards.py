"""The Grafana dashboards of dashboards/ query only what is exported: every metric a
panel's (or a template variable's) PromQL names, parsed by a PromQL parser
(promql-parser, the test extra), is in a real scrape, with the labels its selectors
match on: redis_exporter's scrape of a running sluice-server for the server's
dashboard, a running sluice.worker's /metrics for the workers'."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
import redis

promql_parser = pytest.importorskip("promql_parser", reason="promql-parser comes with the test extra")

import servers  # noqa: E402
from metrics_scrape import scrape as scrape_worker  # noqa: E402
from sluice.worker import RecoveryConfig, Worker, WorkerConfig  # noqa: E402
from test_redis_exporter import exporter, same_data, scrape  # noqa: E402,F401 - exporter: a fixture
from worker_support import wait_for  # noqa: E402
from worker_thread import WorkerThread  # noqa: E402

DASHBOARDS = Path(__file__).resolve().parents[2] / "dashboards"
# Grafana's own variables that stand where PromQL wants a duration; `$name` in a string stays.
DURATIONS = {"$__rate_interval": "1m", "$__interval": "1m", "$__range": "1h"}
# Labels Prometheus adds to every series it scrapes (the targets do not export them).
TARGET_LABELS = {"instance", "job"}
LABEL_VALUES = re.compile(r"label_values\((?:(.*),\s*)?(\w+)\)\Z", re.S)

Selectors = Set[Tuple[str, Tuple[str, ...]]]          # (metric, the labels it is matched on)


def selectors(expr: str) -> Selectors:
    """Every vector selector of a PromQL expression: its metric name and matched labels."""
    for variable, duration in DURATIONS.items():
        expr = expr.replace(variable, duration)
    found: Selectors = set()
    pending = [promql_parser.parse(expr)]
    while pending:
        node = pending.pop()
        if isinstance(node, promql_parser.VectorSelector):
            matchers = node.matchers.matchers
            names = [m.value for m in matchers if m.name == "__name__"]
            name = node.name or (names[0] if names else None)
            assert name, f"a selector without a metric name in {expr!r}"
            found.add((name, tuple(sorted(m.name for m in matchers if m.name != "__name__"))))
        elif isinstance(node, promql_parser.MatrixSelector):
            pending.append(node.vector_selector)
        elif isinstance(node, promql_parser.Call):
            pending.extend(node.args)
        elif isinstance(node, promql_parser.AggregateExpr):
            pending.extend(n for n in (node.expr, node.param) if n is not None)
        elif isinstance(node, promql_parser.BinaryExpr):
            pending.extend((node.lhs, node.rhs))
        elif isinstance(node, (promql_parser.ParenExpr, promql_parser.UnaryExpr, promql_parser.SubqueryExpr)):
            pending.append(node.expr)
        else:
            assert isinstance(node, (promql_parser.NumberLiteral, promql_parser.StringLiteral)), node
    return found


def queries(dashboard: dict) -> Iterator[Tuple[str, str]]:
    """(where, PromQL) of every panel target and every query variable."""
    for panel in dashboard["panels"]:
        assert panel["targets"], f"panel {panel['title']!r} queries nothing"
        for target in panel["targets"]:
            yield f"panel {panel['title']!r}", target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            match = LABEL_VALUES.match(variable["query"]["query"])
            assert match and match.group(1), f"variable {variable['name']}: not label_values(<query>, label)"
            yield f"variable {variable['name']!r}", match.group(1)


def unexported(dashboard: dict, samples: Dict[str, Set[str]]) -> List[str]:
    """What the dashboard queries that `samples` (sample name -> its label names) lacks."""
    missing = []
    for where, expr in queries(dashboard):
        for name, labels in selectors(expr):
            if name not in samples:
                missing.append(f"{where}: {name}")
            elif set(labels) - samples[name] - TARGET_LABELS:
                missing.append(f"{where}: {name} has no label {sorted(set(labels) - samples[name])}")
    return missing


def load(name: str) -> dict:
    return json.loads((DASHBOARDS / name).read_text())


def test_selectors_are_parsed_not_guessed() -> None:
    """Functions, aggregations, grouping labels, strings and durations are no metrics; a
    misspelt metric is one, and a query that does not parse fails."""
    expr = ('histogram_quantile(0.95, sum by (le, cmd) (rate(redis_commands_totl{cmd="get", instance=~"$i"}'
            '[$__rate_interval]))) / on (cmd) group_left max without (db) (up offset 5m) > bool 0'
            ' or label_replace(vector(1), "a", "b", "", "") or {__name__="x_total", job="j"}')
    assert selectors(expr) == {("redis_commands_totl", ("cmd", "instance")), ("up", ()), ("x_total", ("job",))}
    with pytest.raises(Exception):
        selectors("sum(rate(redis_commands_total[5m])")


def test_the_server_dashboard_queries_what_redis_exporter_exports(exporter: str) -> None:  # noqa: F811
    with servers.SluiceServer(["--save", ""], loglevel="warning") as sluice:
        client = redis.Redis(port=sluice.port)
        same_data(client)
        metrics, errors = scrape(exporter, sluice.port)
        client.close()
    assert errors == []
    samples = {name: {label.split("=")[0] for label in re.findall(r'(\w+)="', "".join(series))}
               for name, series in metrics.items()}
    dashboard = load("sluice-server.json")
    assert unexported(dashboard, samples) == []
    assert len(list(queries(dashboard))) >= 30


def test_the_worker_dashboard_queries_what_a_worker_exports(tmp_path: Path) -> None:
    with servers.SluiceServer(["--save", ""], workdir=tmp_path) as sluice:
        config = WorkerConfig("jobs", "crew", "w1", metrics_port=0, metrics_host="127.0.0.1",
                              recovery=RecoveryConfig(reconciliation_interval=0.3))
        worker = Worker(redis.Redis(port=sluice.port, decode_responses=True), config, lambda task: None)
        with WorkerThread(worker):
            wait_for(lambda: worker.metrics_port is not None and worker.stats.recovery_scans >= 1, "a scan")
            page = scrape_worker(worker.metrics_port)
    samples: Dict[str, Set[str]] = {}
    for name, labels in page:
        samples.setdefault(name, set()).update(label for label, _ in labels)
    dashboard = load("sluice-worker.json")
    assert unexported(dashboard, samples) == []
    named = {name for _, expr in queries(dashboard) for name, _ in selectors(expr)}
    assert {"group_lag", "pel_depth", "handler_duration_seconds_bucket", "recovery_dlq_total",
            "recovery_scan_requeued_total", "recovery_keyspace_requeued_total"} <= named
