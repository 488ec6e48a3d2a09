"""Shared helpers for the benchmark scripts (not a benchmark itself).

Each script imports this first: it puts the checkout on sys.path when no `engine`
is importable otherwise (and after the rest of sys.path always, for examples/) (so the scripts run as `python bench/<name>.py` without
PYTHONPATH, and PYTHONPATH=<another build> takes precedence), starts/stops a private
redis-server, computes order statistics and prints tables (with `rich` when it is
installed, plain aligned text otherwise).
"""
from __future__ import annotations

import contextlib
import csv
import os
import shutil
import socket
import subprocess
import sys
import time
from typing import Iterable, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The checkout's engine, unless PYTHONPATH (or an install) already provides one:
# PYTHONPATH=/some/other/build python bench/<script>.py benchmarks that build.
try:
    import engine  # noqa: F401
except ImportError:
    sys.path.insert(0, REPO)
# examples/ (ServerProcess) is never installed: always the checkout's, found after the rest.
if REPO not in sys.path:
    sys.path.append(REPO)

NA_CLIENT = "n/a (engine.api.client not available)"
NA_REDIS = "n/a (redis-server not available)"


# -- the optional in-process redis-py client ----------------------------------------

def load_embedded():
    """(EmbeddedRedis class, None) or (None, reason) when engine.api.client is missing."""
    try:
        from engine import EmbeddedRedis
    except Exception as exc:  # ImportError, or a half-written module
        return None, "%s: %s" % (type(exc).__name__, exc)
    return EmbeddedRedis, None


# -- a private redis-server ---------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_server_path() -> Optional[str]:
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)


class RedisServer:
    """`redis-server --save "" --appendonly no` on a free loopback port."""

    def __init__(self, *extra: str) -> None:
        exe = redis_server_path()
        if exe is None:
            raise FileNotFoundError("redis-server")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
             *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis
        deadline = time.monotonic() + 10
        while True:
            try:
                c = redis.Redis(host="127.0.0.1", port=self.port)
                c.ping()
                c.close()
                break
            except Exception:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("redis-server did not start on port %d" % self.port)
                time.sleep(0.05)
        self.version = self.client().info("server").get("redis_version", "?")

    def client(self, **kw):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self) -> None:
        from examples.processes import stop_child
        stop_child(self.proc)


@contextlib.contextmanager
def redis_server(*extra: str):
    """Yields a RedisServer, or None (with a note on stderr) when there is none."""
    try:
        srv = RedisServer(*extra)
    except FileNotFoundError:
        print("note: redis-server not found; its columns read n/a", file=sys.stderr)
        yield None
        return
    try:
        yield srv
    finally:
        srv.stop()


class RawConnection:
    """One redis-py connection used without response callbacks: the reply exactly as
    the RESP parser (hiredis when installed) produced it, like Engine.execute."""

    def __init__(self, client) -> None:
        self.pool = client.connection_pool
        self.conn = self.pool.get_connection()

    def __call__(self, *args):
        self.conn.send_command(*args)
        return self.conn.read_response()

    def close(self) -> None:
        self.pool.release(self.conn)


# -- sluice-server beside redis-server -------------------------------------------------

REDIS_BENCHMARK = "redis-benchmark"
BENCH_CLIENTS = 50


def redis_benchmark_rps(port: int, requests: int, command: Sequence[str],
                        pipeline: int = 1, keyspace: int = 0) -> float:
    """requests/s of `redis-benchmark -c 50 <command>` from its --csv line (fails loudly
    on errors); `keyspace` > 0: __rand_int__ ranges over it (-r)."""
    cmd = [REDIS_BENCHMARK, "-p", str(port), "-c", str(BENCH_CLIENTS), "-n", str(requests),
           "--csv"]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    if keyspace > 0:
        cmd += ["-r", str(keyspace)]
    out = subprocess.run(cmd + list(command), capture_output=True, text=True, timeout=600)
    rows = [line for line in out.stdout.splitlines() if line.startswith('"' + command[0])]
    if out.returncode != 0 or len(rows) != 1 or "ERR" in out.stderr:
        raise RuntimeError("redis-benchmark failed (exit %d): %s %s"
                           % (out.returncode, out.stdout[-500:], out.stderr[-500:]))
    return float(next(csv.reader(rows))[1])


@contextlib.contextmanager
def sluice_beside_redis(tls_certs=None):
    """Yields ({"sluice": (port, client), "redis": (port, client)}, redis-server's version)
    for sluice-server and redis-server, both without persistence, RESP2 redis-py clients;
    or None (with a note) when redis-server or redis-benchmark is missing. With
    `tls_certs` (tests/tls_certs.py's TestCerts) each also listens for TLS (no client
    certificate asked) and the port yielded is that one; the clients stay plain."""
    if shutil.which(REDIS_BENCHMARK) is None or redis_server_path() is None:
        print("redis-server / redis-benchmark not installed: nothing to compare against "
              "(`make oracle` installs them)")
        yield None
        return
    import redis
    from examples.processes import ServerProcess
    no_persistence = ["--save", "", "--appendonly", "no"]      # as the redis-server
    tls_ports = {"sluice": free_port(), "redis": free_port()} if tls_certs else {}

    def tls_args(name: str) -> list:
        if not tls_certs:
            return []
        return ["--tls-port", str(tls_ports[name]), "--tls-cert-file", str(tls_certs.server_cert),
                "--tls-key-file", str(tls_certs.server_key), "--tls-auth-clients", "no"]

    with redis_server(*tls_args("redis")) as redis_srv, \
            ServerProcess(no_persistence + tls_args("sluice"), loglevel="warning") as sluice:
        servers = {
            "sluice": (tls_ports.get("sluice", sluice.port),
                       redis.Redis(host="127.0.0.1", port=sluice.port, protocol=2)),
            "redis": (tls_ports.get("redis", redis_srv.port), redis_srv.client(protocol=2)),
        }
        try:
            yield servers, redis_srv.version
        finally:
            for _, client in servers.values():
                client.close()


def in_turn(servers: dict, rnd: int) -> list:
    """The (name, value) pairs of `servers`, first to last in even rounds, last to first in
    odd ones, so that neither side always runs on a warmer (or busier) machine."""
    order = list(servers.items())
    if rnd % 2:
        order.reverse()
    return order


def ratios(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """Median of the per-round ratios ours/theirs."""
    return median(o / t for o, t in zip(ours, theirs))


# -- a server that does no work ------------------------------------------------------

_CANNED_SERVER = """
import socket, sys
reply = open(sys.argv[1], "rb").read()
command = sys.argv[2].encode()
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
print(srv.getsockname()[1], flush=True)
while True:
    conn, _ = srv.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        data = conn.recv(65536)
        if not data:
            break
        conn.sendall(reply if command in data else b"+OK\\r\\n")
    conn.close()
"""


@contextlib.contextmanager
def canned_server(command: str, reply: bytes, workdir: str):
    """Yields the port of a process that answers each read from a client (one at a
    time) holding `command` with `reply` (RESP bytes), anything else (a client's
    handshake) with +OK: what a call costs a client when the server spends no time
    at all, the floor for any server returning that reply."""
    path = os.path.join(workdir, "canned-reply.resp")
    with open(path, "wb") as fh:
        fh.write(reply)
    proc = subprocess.Popen([sys.executable, "-c", _CANNED_SERVER, path, command],
                            stdout=subprocess.PIPE, text=True)
    try:
        yield int(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()


# -- command-line defaults ------------------------------------------------------------

def quick_defaults(args, **quick_and_full: tuple) -> None:
    """Fills each option left at None with its (quick, full) value: which one depends
    on --quick, so a quick run shrinks what the user did not set."""
    for name, (quick, full) in quick_and_full.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)


# -- statistics -----------------------------------------------------------------------

def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    if n == 1:
        return float(sorted_values[0])
    pos = (n - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(values: Iterable[float]) -> dict:
    v = sorted(values)
    return {
        "n": len(v),
        "avg": sum(v) / len(v) if v else float("nan"),
        "median": percentile(v, 50),
        "p95": percentile(v, 95),
        "p99": percentile(v, 99),
        "min": v[0] if v else float("nan"),
        "max": v[-1] if v else float("nan"),
    }


def median(values: Iterable[float]) -> float:
    return percentile(sorted(values), 50)


# -- formatting -----------------------------------------------------------------------

def fmt_ms(seconds: Optional[float]) -> str:
    return "n/a" if seconds is None else "%.3f" % (seconds * 1e3)


def fmt_int(x: Optional[float]) -> str:
    return "n/a" if x is None else "{:,.0f}".format(x)


def fmt_ratio(x: Optional[float]) -> str:
    if x is None:
        return "n/a"
    return "%.1fx" % x if x >= 10 else "%.2fx" % x


def verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def record_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> None:
    """Appends the table as a JSON line to the file $SLUICE_BENCH_TABLES names, when it
    does (run_all.py sets it; bench/charts.py draws the file)."""
    path = os.environ.get("SLUICE_BENCH_TABLES")
    if not path:
        return
    import json
    with open(path, "a") as out:
        out.write(json.dumps({"script": os.path.basename(sys.argv[0]), "title": title,
                              "headers": list(headers), "align": align, "rows": rows}) + "\n")


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]],
                align: Optional[str] = None) -> None:
    """A table: first column left-aligned, the others right-aligned (or per `align`,
    one 'l'/'r' per column)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    rows = [[str(c) for c in row] for row in rows]
    record_table(title, headers, rows, align)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None
    if Console is not None:
        t = Table(title=title)
        for h, a in zip(headers, align):
            t.add_column(h, justify="left" if a == "l" else "right")
        for row in rows:
            t.add_row(*row)
        Console(width=200).print(t)
        return
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]

    def line(cells):
        out = []
        for c, w, a in zip(cells, widths, align):
            out.append(c.ljust(w) if a == "l" else c.rjust(w))
        return "  ".join(out).rstrip()

    print()
    print(title)
    print(line([str(h) for h in headers]))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    sys.stdout.flush()


def loadavg() -> str:
    """/proc/loadavg as one line (benchmarks print it before and after their runs)."""
    with open("/proc/loadavg") as f:
        return f.read().strip()


def header(name: str, args, extra: str = "") -> None:
    """One line saying what ran, with which Python, load and options."""
    import platform
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    print("%s  python %s  cpus %s  loadavg %s  %s" % (
        name, platform.python_version(), os.cpu_count(), load,
        " ".join("%s=%s" % kv for kv in sorted(vars(args).items()))))
    if extra:
        print(extra)
    sys.stdout.flush()
