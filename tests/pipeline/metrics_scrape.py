"""Reading a worker's /metrics over HTTP, as Prometheus would (tests of sluice.worker)."""
from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

# A sample's name and its labels, sorted: ("tasks_done_total", (("consumer", "c1"), ...)).
SampleKey = tuple[str, tuple[tuple[str, str], ...]]


def scrape(port: int) -> dict[SampleKey, float]:
    """Every sample /metrics on `port` serves."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def sample(samples: dict[SampleKey, float], name: str, **labels: str) -> float:
    """The value of one sample (KeyError when it is not there)."""
    return samples[(name, tuple(sorted(labels.items())))]
