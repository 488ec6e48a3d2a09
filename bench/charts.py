#!/usr/bin/env python3
"""PNG charts of the tables the benchmark scripts printed (`make bench` draws them
beside its tables; needs the charts extra, matplotlib).

    python bench/charts.py TABLES.jsonl OUT_DIR

TABLES.jsonl holds one table a line (bench/_common.py's record_table, written when
$SLUICE_BENCH_TABLES names the file). Each table with figures becomes one PNG: a panel
per measure, the columns named alike but for "sluice" / "redis" (sluice rps and redis
rps) side by side in one panel, a bar group per row (its left-aligned cells)."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

DPI = 100
WIDTH_IN = 10.0
BAR_IN = 0.22                 # height of one bar
PANEL_EXTRA_IN = 1.1          # a panel's title, axis and margins
TITLE_IN = 0.6                # the table's title, up to two lines
VERDICTS = {"PASS", "MISS", "n/a", ""}
NUMBER = re.compile(r"-?[\d,]*\.?\d+\Z")
CONTENDERS = re.compile(r"\b(sluice(-server)?|redis(-server)?)\b", re.I)
COLORS = {"sluice": "#1f77b4", "redis": "#d62728"}


def figure(cell: str) -> Optional[float]:
    """A plain number (commas allowed); a ratio ("1.05x"), a verdict or n/a is none."""
    cell = cell.strip()
    return float(cell.replace(",", "")) if NUMBER.match(cell) else None


def measures(table: dict) -> Dict[str, List[int]]:
    """Measure name -> the columns of figures that show it (left-aligned ones are labels)."""
    found: Dict[str, List[int]] = {}
    for column, (header, align) in enumerate(zip(table["headers"], table["align"])):
        cells = [row[column] for row in table["rows"]]
        if align == "l" or not any(figure(cell) is not None for cell in cells):
            continue
        if all(figure(cell) is None and cell.strip() for cell in cells):
            continue
        plain = " ".join(CONTENDERS.sub("", header).split())
        if plain != header:                 # "sluice rps" and "redis rps": one panel, "rps"
            found.setdefault(plain or "sluice-server and redis-server", []).append(column)
        else:                               # a panel of its own, even where a header repeats
            found[header if header not in found else f"{header} ({column + 1})"] = [column]
    return found


def size_of(table: dict) -> Tuple[int, int]:
    """The PNG's (width, height) in pixels."""
    rows = len(table["rows"])
    height = TITLE_IN + sum(rows * len(columns) * BAR_IN + PANEL_EXTRA_IN for columns in measures(table).values())
    return round(WIDTH_IN * DPI), round(height * DPI)


def draw(table: dict, path: Path) -> bool:
    """The table's chart into `path`; False (nothing written) when it has no figures."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = measures(table)
    if not found or not table["rows"]:
        return False
    width, height = size_of(table)
    heights = [len(table["rows"]) * len(columns) * BAR_IN + PANEL_EXTRA_IN for columns in found.values()]
    fig, axes = plt.subplots(len(found), 1, figsize=(width / DPI, height / DPI), dpi=DPI,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    labels = [" ".join(cell for cell, align in zip(row, table["align"]) if align == "l" and cell not in VERDICTS)
              for row in table["rows"]]
    for ax, (name, columns) in zip(axes[:, 0], found.items()):
        band = 0.8 / len(columns)
        for n, column in enumerate(columns):
            header = table["headers"][column]
            contender = CONTENDERS.search(header)
            color = COLORS.get(contender.group(1).split("-")[0].lower()) if contender else None
            values = [figure(row[column]) or 0.0 for row in table["rows"]]
            ax.barh([i + n * band for i in range(len(values))], values, height=band, label=header, color=color)
        shown = [figure(row[column]) for column in columns for row in table["rows"]]
        positive = [value for value in shown if value and value > 0]
        if positive and max(positive) > 100 * min(positive):
            ax.set_xscale("log")             # native engine beside a network client: decades apart
        ax.set_yticks([i + band * (len(columns) - 1) / 2 for i in range(len(labels))], labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(name, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
        if len(columns) > 1:
            ax.legend(fontsize=7, loc="best")
    fig.suptitle(f"{table['script']}: {table['title']}", fontsize=9, x=0.01, y=1 - 0.1 / (height / DPI),
                 ha="left", va="top", wrap=True)
    fig.tight_layout(rect=(0, 0, 1, 1 - TITLE_IN / (height / DPI)))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def draw_all(tables_file: Path, out: Path) -> List[Path]:
    """One PNG per table with figures, named after its script and place: the paths."""
    out.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    counts: Dict[str, int] = {}
    for line in tables_file.read_text().splitlines():
        table = json.loads(line)
        stem = Path(table["script"]).stem
        counts[stem] = counts.get(stem, 0) + 1
        path = out / f"{stem}-{counts[stem]}.png"
        if draw(table, path):
            written.append(path)
    return written


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__)
        return 2
    for path in draw_all(Path(args[0]), Path(args[1])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
