"""`make bench`'s charts: a real quick benchmark run (throughput_bench.py --quick) records
its tables ($SLUICE_BENCH_TABLES), bench/charts.py draws them, and each PNG opens at the
size the writer computed for its table, with a panel per measure."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the charts need matplotlib, the charts extra")

from PIL import Image  # noqa: E402 - Pillow comes with matplotlib

from servers import checkout_env  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"


def charts_module():  # noqa: ANN201 - bench/charts.py, which is no package's module
    spec = importlib.util.spec_from_file_location("charts", BENCH / "charts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_quick_bench_run_is_drawn(tmp_path: Path) -> None:
    tables = tmp_path / "tables.jsonl"
    bench = subprocess.run([sys.executable, str(BENCH / "throughput_bench.py"), "--quick"],
                           env=checkout_env(SLUICE_BENCH_TABLES=str(tables)), capture_output=True, text=True,
                           timeout=600)
    assert bench.returncode == 0, bench.stderr[-3000:]
    recorded = [json.loads(line) for line in tables.read_text().splitlines()]
    assert [t["title"].split(",")[0] for t in recorded] == ["Throughput", "Ratios vs fakeredis (median of per-round ratios)"]
    drawn = subprocess.run([sys.executable, str(BENCH / "charts.py"), str(tables), str(tmp_path / "out")],
                           env=checkout_env(), capture_output=True, text=True, timeout=300)
    assert drawn.returncode == 0, drawn.stderr[-3000:]
    charts = charts_module()
    # the ratios table holds ratios and verdicts only: no chart
    assert drawn.stdout.split() == [str(tmp_path / "out" / "throughput_bench-1.png")]
    throughput = recorded[0]
    panels = charts.measures(throughput)
    assert list(panels)[:3] == ["XADD N", "XADD/s", "min"] and len(panels) == 8
    with Image.open(tmp_path / "out" / "throughput_bench-1.png") as png:
        assert png.format == "PNG" and png.size == charts.size_of(throughput)
        assert png.size[1] > (8 * 4 * charts.BAR_IN + charts.TITLE_IN) * charts.DPI


def test_sluice_and_redis_columns_share_a_panel() -> None:
    """A table in redis_benchmark_bench.py's shape: rps and CPU, each with both servers."""
    charts = charts_module()
    table = {"headers": ["test", "mode", "sluice rps", "redis rps", "ratio", "sluice CPU us/req",
                         "redis CPU us/req", "CPU ratio", ">= 1.0x"], "align": "llrrrrrrl",
             "rows": [["SET", "", "80,000", "100,000", "0.80x", "9.10", "8.00", "0.88x", "MISS"]]}
    assert charts.measures(table) == {"rps": [2, 3], "CPU us/req": [5, 6]}
