"""What sluice-top shows: the server's line, the streams, their groups and the
dead-letter streams, drawn with rich; and the same figures as JSON for `--once`."""
from __future__ import annotations

from typing import List, Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from sluice.top.history import SERVER, History, sparkline
from sluice.top.ordering import Ordering
from sluice.top.sample import Sample, StreamReading

KEYS_HELP = "s sort  r reverse  / filter  Esc clear  q quit"


def printable(name: str) -> str:
    """A key, group or consumer name as text: bytes that are not UTF-8 as \\xNN (and, in
    the tables, as a Text: no rich markup is read in it)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def size(n: Optional[int]) -> str:
    """Bytes as Redis's INFO writes them humanly (1.50M)."""
    if n is None:
        return "-"
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f}{unit}"
    return f"{n}B"


def duration(ms: Optional[int]) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    return f"{ms // 60_000}m{ms % 60_000 // 1000:02d}s"


def persistence_state(persistence: dict) -> str:
    if persistence.get("loading"):
        return "loading"
    parts = ["aof on" if persistence.get("aof_enabled") else "aof off"]
    if persistence.get("aof_rewrite_in_progress"):
        parts.append("rewriting")
    if persistence.get("rdb_bgsave_in_progress"):
        parts.append("bgsave")
    if persistence.get("aof_last_write_status", "ok") != "ok" or persistence.get("rdb_last_bgsave_status", "ok") != "ok":
        parts.append("WRITE ERROR")
    parts.append(f"{persistence.get('rdb_changes_since_last_save', 0)} unsaved")
    return ", ".join(parts)


def render(sample: Sample, history: History, ordering: Ordering, url: str, typing: Optional[str] = None) -> Group:
    """The whole screen for one sample."""
    server = sample.server
    ops = history.rate(SERVER)
    head = Text.assemble(
        (f"{url}  ", "bold"), f"{server.engine} {server.version}  ",
        f"ops/s {ops:.0f} " if ops is not None else "ops/s - ", (sparkline(history.rates(SERVER)), "cyan"),
        f"  clients {server.clients}  memory {size(server.used_memory)}  ",
        f"persistence: {persistence_state(server.persistence)}")
    shown = ordering.apply(sample.streams, history)
    streams = [stream for stream in shown if not stream.dead_letters]
    dead = [stream for stream in shown if stream.dead_letters]
    order = f"sort {ordering.sort}{' reversed' if ordering.reverse else ''}"
    status = f"filter: {typing}_" if typing is not None else (
        f"filter '{ordering.filter}'  " if ordering.filter else "") + order
    return Group(head, _streams_table(streams, history), _groups_table(streams), _dead_table(dead),
                 Text(f"{status}   [{KEYS_HELP}]", style="dim"))


def _streams_table(streams: List[StreamReading], history: History) -> Table:
    table = Table(title="streams", expand=True, title_justify="left")
    for column in ("stream", "length", "entries/s", "last minutes", "memory", "groups"):
        table.add_column(column, justify="left" if column in ("stream", "last minutes") else "right")
    for stream in streams:
        rate = history.rate(stream.name)
        table.add_row(Text(printable(stream.name)), str(stream.length), "-" if rate is None else f"{rate:.1f}",
                      Text(sparkline(history.rates(stream.name)), "green"), size(stream.memory),
                      str(len(stream.groups)))
    return table


def _groups_table(streams: List[StreamReading]) -> Table:
    table = Table(title="consumer groups", expand=True, title_justify="left")
    for column in ("stream", "group", "lag", "pending", "oldest pending idle", "consumers (idle)"):
        table.add_column(column, justify="right" if column in ("lag", "pending", "oldest pending idle") else "left")
    for stream in streams:
        for group in stream.groups:
            consumers = " ".join(f"{printable(c.name)}({duration(c.idle_ms)})" for c in group.consumers)
            table.add_row(Text(printable(stream.name)), Text(printable(group.name)), "-" if group.lag is None else str(group.lag),
                          str(group.pending), duration(group.oldest_pending_idle_ms), Text(consumers))
    return table


def _dead_table(dead: List[StreamReading]) -> Table:
    table = Table(title="dead letters", expand=True, title_justify="left")
    for column in ("dead-letter stream", "entries", "memory"):
        table.add_column(column, justify="left" if column == "dead-letter stream" else "right")
    for stream in dead:
        table.add_row(Text(printable(stream.name)), str(stream.length), size(stream.memory))
    return table


def as_json(sample: Sample, history: History, ordering: Ordering) -> dict:
    """The figures `--once --json` prints."""
    server = sample.server
    return {
        "taken": sample.taken,
        "server": {"engine": server.engine, "version": server.version, "ops_per_sec": history.rate(SERVER),
                   "clients": server.clients, "used_memory": server.used_memory,
                   "persistence": server.persistence},
        "streams": [{
            "name": printable(stream.name), "length": stream.length, "entries_added": stream.entries_added,
            "entries_per_sec": history.rate(stream.name), "memory": stream.memory,
            "dead_letters": stream.dead_letters,
            "groups": [{"name": printable(group.name), "lag": group.lag, "pending": group.pending,
                        "oldest_pending_idle_ms": group.oldest_pending_idle_ms,
                        "consumers": [{"name": printable(c.name), "pending": c.pending, "idle_ms": c.idle_ms}
                                      for c in group.consumers]}
                       for group in stream.groups]}
            for stream in ordering.apply(sample.streams, history)]}
