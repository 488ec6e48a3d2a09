"""What the server keeps of the commands it runs, fed by the road's hook after a call
(engine/api/road.pyx `call` hands a call that ran at least `hub.hook_ns` to
ServerHub.after_call):

- `SlowLog`: SLOWLOG, the calls of at least slowlog-log-slower-than microseconds,
  newest first, at most slowlog-max-len of them;
- `LatencyMonitor`: LATENCY, per event (`command`, `fast-command`) the spikes of at
  least latency-monitor-threshold milliseconds, one sample per second;
- `Monitors`: the MONITOR clients, each sent every command as it runs.

`hook_ns()` of each says from how long a call on it wants to hear (-1: not at all), so
a server where none listens pays one comparison per call.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Optional

from engine.core.errors import ResponseError, subcommand_syntax
from engine.resp.numbers import strict_int
from engine.resp.reply import OK, Status

MAX_ARGS = 32               # arguments a slow log entry keeps (the last says how many more)
MAX_ARG_BYTES = 128         # bytes of an argument it keeps
LATENCY_SAMPLES = 160       # samples a latency event keeps
REDACTED = b"(redacted)"
COUNT_RANGE = "ERR count should be greater than or equal to -1"
NO_SAMPLES = "ERR No samples available for event '%s'"


def shown_args(argv: list) -> list:
    """argv as the slow log and MONITOR show it: the secrets of AUTH and HELLO ... AUTH
    redacted."""
    name = argv[0].lower()
    if name == b"auth":
        return argv[:1] + [REDACTED] * (len(argv) - 1)
    if name == b"hello":
        shown = list(argv)
        for i in range(2, len(argv) - 2):
            if argv[i].lower() == b"auth":
                shown[i + 1] = shown[i + 2] = REDACTED
        return shown
    return argv


# -- SLOWLOG ---------------------------------------------------------------------------

class SlowLog:
    """The slow log (see the module docstring)."""

    def __init__(self, slower_than_us: int, max_len: int) -> None:
        self.entries: deque = deque()
        self.next_id = 0
        self.slower_than_us = slower_than_us
        self.max_len = max_len

    def hook_ns(self) -> int:
        return -1 if self.slower_than_us < 0 else self.slower_than_us * 1000

    def heard(self, argv: list, ns: int, peer: bytes, name: Optional[bytes]) -> None:
        if self.slower_than_us < 0 or ns < self.slower_than_us * 1000:
            return
        args = [_clipped(arg) for arg in shown_args(argv)[:MAX_ARGS]]
        if len(argv) > MAX_ARGS:
            args[-1] = b"... (%d more arguments)" % (len(argv) - MAX_ARGS + 1)
        self.entries.appendleft([self.next_id, int(time.time()), ns // 1000, args, peer,
                                 name or b""])
        self.next_id += 1
        self.trim()

    def trim(self) -> None:
        while len(self.entries) > self.max_len:
            self.entries.pop()

    def command(self, argv: list):
        """SLOWLOG GET [count] | LEN | RESET | HELP."""
        sub = argv[1].lower()
        if sub == b"get" and len(argv) <= 3:
            count = 10
            if len(argv) == 3:
                count = strict_int(argv[2])
                if count is None or count < -1:
                    raise ResponseError(COUNT_RANGE)
            entries = list(self.entries)
            return entries if count == -1 else entries[:count]
        if sub == b"len" and len(argv) == 2:
            return len(self.entries)
        if sub == b"reset" and len(argv) == 2:
            self.entries.clear()
            return OK
        if sub == b"help" and len(argv) == 2:
            return [Status(line.encode()) for line in SLOWLOG_HELP]
        raise subcommand_syntax(argv[0], argv[1])


def _clipped(arg: bytes) -> bytes:
    if len(arg) <= MAX_ARG_BYTES:
        return arg
    return arg[:MAX_ARG_BYTES] + b"... (%d more bytes)" % (len(arg) - MAX_ARG_BYTES)


SLOWLOG_HELP = (
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
)


# -- LATENCY ---------------------------------------------------------------------------

class LatencyMonitor:
    """The latency monitor (see the module docstring): event -> its samples
    [(unix time, ms)] and its highest ms."""

    def __init__(self, threshold_ms: int) -> None:
        self.threshold_ms = threshold_ms
        self.events: dict[bytes, tuple[deque, list]] = {}

    def hook_ns(self) -> int:
        return self.threshold_ms * 1_000_000 if self.threshold_ms > 0 else -1

    def heard(self, event: bytes, ns: int) -> None:
        ms = ns // 1_000_000
        if self.threshold_ms <= 0 or ms < self.threshold_ms:
            return
        now = int(time.time())
        samples, peak = self.events.setdefault(event, (deque(maxlen=LATENCY_SAMPLES), [0]))
        if samples and samples[-1][0] == now:
            samples[-1] = (now, max(samples[-1][1], ms))
        else:
            samples.append((now, ms))
        peak[0] = max(peak[0], ms)

    def command(self, argv: list, stats):
        """LATENCY LATEST | HISTORY event | RESET [event ...] | GRAPH event | DOCTOR |
        HISTOGRAM [command ...] | HELP."""
        sub = argv[1].lower()
        if sub == b"latest" and len(argv) == 2:
            return [[event, samples[-1][0], samples[-1][1], peak[0]]
                    for event, (samples, peak) in self.events.items()]
        if sub == b"history" and len(argv) == 3:
            samples, _ = self.events.get(argv[2], ((), None))
            return [[when, ms] for when, ms in samples]
        if sub == b"reset":
            names = argv[2:] or list(self.events)
            return sum(1 for name in names if self.events.pop(name, None) is not None)
        if sub == b"graph" and len(argv) == 3:
            return self.graph(argv[2])
        if sub == b"doctor" and len(argv) == 2:
            return self.doctor()
        if sub == b"histogram":
            return _histograms(stats, argv[2:])
        if sub == b"help" and len(argv) == 2:
            return [Status(line.encode()) for line in LATENCY_HELP]
        raise subcommand_syntax(argv[0], argv[1])

    def graph(self, event: bytes) -> bytes:
        """The event's samples as rows of `#` scaled to its highest, oldest first."""
        found = self.events.get(event)
        if found is None:
            raise ResponseError(NO_SAMPLES % event.decode("utf-8", "replace"))
        samples, peak = found
        now = int(time.time())
        rows = [b"%s - high %d ms, low %d ms (all time high %d ms)" % (
            event, max(ms for _, ms in samples), min(ms for _, ms in samples), peak[0])]
        for when, ms in samples:
            bar = b"#" * max(1, ms * 40 // max(peak[0], 1))
            rows.append(b"%6ds ago %6d ms %s" % (now - when, ms, bar))
        return b"\n".join(rows) + b"\n"

    def doctor(self) -> bytes:
        """A plain report of each event's spikes."""
        if not self.events:
            return (b"No latency spike has been recorded (latency-monitor-threshold: %d ms"
                    b"%s).\n" % (self.threshold_ms,
                                 b", 0 means off" if self.threshold_ms == 0 else b""))
        lines = [b"Latency spikes recorded (latency-monitor-threshold: %d ms):"
                 % self.threshold_ms]
        for event, (samples, peak) in self.events.items():
            average = sum(ms for _, ms in samples) // len(samples)
            lines.append(b"- %s: %d samples kept, highest %d ms, average %d ms, latest %d ms"
                         % (event, len(samples), peak[0], average, samples[-1][1]))
        return b"\n".join(lines) + b"\n"


def _histograms(stats, names: list) -> dict:
    """LATENCY HISTOGRAM: per command that was called (all of them, or those named),
    its calls and its cumulative latency histogram (INFO latencystats' samples)."""
    wanted = {name.decode("utf-8", "replace").lower() for name in names}
    return {name.encode(): {b"calls": stat.calls,
                            b"histogram_usec": dict(stat.cumulative_usec())}
            for name, stat in sorted(stats.commands.items())
            if stat.calls and (not wanted or name in wanted)}


LATENCY_HELP = (
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
)


# -- MONITOR ---------------------------------------------------------------------------

class Monitors:
    """The MONITOR clients (connections) and the line each command is sent to them as."""

    def __init__(self) -> None:
        self.conns: dict = {}

    def hook_ns(self) -> int:
        return 0 if self.conns else -1

    def feed(self, db: int, addr: bytes, argv: list, caller=None) -> None:
        """Sends argv's line to every MONITOR client; the caller's own (a MONITOR
        client running a command) after that command's reply."""
        now = time.time()
        line = b"%d.%06d [%d %s] %s" % (int(now), int(now * 1_000_000) % 1_000_000, db, addr,
                                        b" ".join(_quoted(arg) for arg in shown_args(argv)))
        for conn in list(self.conns):
            if conn is caller:
                conn.hold_status(line)
            else:
                conn.send_status(line)


def _quoted(arg: bytes) -> bytes:
    """arg in double quotes, with C escapes for quotes, backslashes and bytes that are
    not printable ASCII."""
    out = bytearray(b'"')
    for c in arg:
        if c == 0x5C or c == 0x22:
            out += b"\\%c" % c
        elif c in _ESCAPES:
            out += _ESCAPES[c]
        elif 0x20 <= c < 0x7F:
            out.append(c)
        else:
            out += b"\\x%02x" % c
    out += b'"'
    return bytes(out)


_ESCAPES = {0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x07: b"\\a", 0x08: b"\\b"}
