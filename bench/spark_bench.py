#!/usr/bin/env python3
"""The Spark formats beside the bare redis-py loops they wrap, in one run.

Data: N entries (default 1,000,000; --quick 100,000) spread over 4 streams
`s0..s3`, each `user u<0..999> amount <0..99999>`, loaded into a sluice-server
(engine/server/testing.py's ServerProcess, no persistence) and a redis-server
(`--save "" --appendonly no`), both on free loopback ports; the sluice-server then
SAVEs them into a snapshot file. Spark runs locally (local[2], the machine's 2 cores).

  bare XRANGE loop    redis-py (hiredis) reading all 4 streams with XRANGE COUNT
                      <pageSize>, one page after another: the client-side floor of
                      any reader built on redis-py
  Spark count()       spark.read.format("sluice") ... .load().count()
  Spark groupBy       the same read with decode=true, grouped by the `user` field:
                      count and sum of `amount` per user (1,000 groups), collected
  snapshot            format `sluice-snapshot` on the snapshot file, count() and the
                      same groupBy (no server involved)
  bare XADD loop      redis-py pipelines of <chunk> XADDs (no MULTI), one pipeline at a
                      time, into 4 new streams
  Spark sink          a cached DataFrame of N rows (stream, fields map) written with
                      df.write.format("sluice"), into 4 new streams

Rates are entries/s, medians of --repeat runs (Spark: after one small warm-up read).
Targets: Spark read from Sluice >= 0.5x the bare XRANGE loop on Sluice; the snapshot
reader >= 2x the Spark read from the Sluice server; the sink >= 0.5x the bare
pipelined-XADD loop into the same server.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

import redis  # noqa: E402

from engine.server.testing import ServerProcess  # noqa: E402

STREAMS = 4
USERS = 1000
PAGE_SIZE = 10_000
XADD_CHUNK = 1000


def stream_names(prefix: str) -> List[str]:
    return [f"{prefix}{i}" for i in range(STREAMS)]


def entry_fields(i: int) -> Dict[str, str]:
    return {"user": f"u{i % USERS}", "amount": str(i * 7919 % 100_000)}


def xadd_loop(client: redis.Redis, names: Sequence[str], total: int, chunk: int) -> float:
    """Seconds to add `total` entries over `names` in pipelines of `chunk` XADDs."""
    started = time.perf_counter()
    pipe = client.pipeline(transaction=False)
    for i in range(total):
        pipe.xadd(names[i % len(names)], entry_fields(i))
        if len(pipe) == chunk:
            pipe.execute()
    pipe.execute()
    return time.perf_counter() - started


def xrange_loop(client: redis.Redis, names: Sequence[str], page: int) -> tuple:
    """(entries read, seconds): every entry of `names`, XRANGE page after page."""
    started = time.perf_counter()
    read = 0
    for name in names:
        start = "-"
        while True:
            got = client.xrange(name, start, "+", count=page)
            read += len(got)
            if len(got) < page:
                break
            start = "(" + got[-1][0].decode()
    return read, time.perf_counter() - started


def timed(action: Callable[[], object], repeat: int, expect: Optional[int] = None) -> float:
    """Median seconds of `action`; when `expect` is given, each run must return it."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        got = action()
        times.append(time.perf_counter() - started)
        if expect is not None and got != expect:
            raise RuntimeError(f"expected {expect} entries, got {got}")
    return C.median(times)


def spark_reads(spark, reader: Callable[[bool], object], total: int, repeat: int) -> dict:
    """Seconds of count() and of the per-user groupBy over `reader(decode)`'s DataFrame."""
    from pyspark.sql import functions as F

    def grouped() -> int:
        df = reader(True)
        rows = (df.groupBy(F.col("fields")["user"].alias("user"))
                .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("fields")["amount"].cast("long")))
                .collect())
        if len(rows) != USERS:
            raise RuntimeError(f"expected {USERS} users, got {len(rows)}")
        return sum(row["n"] for row in rows)

    return {"count": timed(lambda: reader(False).count(), repeat, total),
            "groupBy": timed(grouped, repeat, total)}


def server_reader(spark, url: str, names: Sequence[str]) -> Callable[[bool], object]:
    return lambda decode: (spark.read.format("sluice").option("url", url)
                           .option("streams", ",".join(names)).option("pageSize", str(PAGE_SIZE))
                           .option("decode", str(decode).lower()).load())


def snapshot_reader(spark, path: str) -> Callable[[bool], object]:
    return lambda decode: (spark.read.format("sluice-snapshot")
                           .option("decode", str(decode).lower()).load(path))


def sink_write(spark, rows, url: str, client: redis.Redis, names: Sequence[str], total: int) -> None:
    """Writes the cached rows into `names` (fresh streams) and checks they all arrived."""
    client.delete(*names)
    rows.write.format("sluice").option("url", url).mode("append").save()
    written = sum(client.xlen(name) for name in names)
    if written != total:
        raise RuntimeError(f"the sink wrote {written} entries, expected {total}")


def rows_to_write(spark, total: int, prefix: str):
    """N rows (stream, fields) like the loaded entries, cached in Spark's memory."""
    from pyspark.sql import functions as F

    ids = spark.range(total)
    rows = ids.select(
        F.concat(F.lit(prefix), (F.col("id") % STREAMS).cast("string")).alias("stream"),
        F.create_map(F.lit("user"), F.concat(F.lit("u"), (F.col("id") % USERS).cast("string")),
                     F.lit("amount"), (F.col("id") * 7919 % 100_000).cast("string")).alias("fields"),
    ).cache()
    rows.count()
    return rows


def measure_server(name: str, client: redis.Redis, url: str, spark, total: int,
                   repeat: int, rows) -> dict:
    """Every rate on one server: bare loops, Spark reads and the sink."""
    out: dict = {}
    scratch = stream_names("x")
    adds = []
    for _ in range(repeat):
        client.delete(*scratch)
        adds.append(xadd_loop(client, scratch, total, XADD_CHUNK))
    client.delete(*scratch)
    out["xadd"] = total / C.median(adds)
    data = stream_names("s")
    out["xrange"] = total / timed(lambda: xrange_loop(client, data, PAGE_SIZE)[0], repeat, total)
    print(f"{name}: bare loops done", flush=True)
    if spark is not None:
        reads = spark_reads(spark, server_reader(spark, url, data), total, repeat)
        out.update({k: total / v for k, v in reads.items()})
        out["sink"] = total / timed(lambda: sink_write(spark, rows, url, client, stream_names("w"),
                                                        total), repeat)
        client.delete(*stream_names("w"))
        print(f"{name}: Spark reads and sink done", flush=True)
    return out


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 entries, one run each")
    ap.add_argument("--entries", type=int, default=None, help="default 1,000,000")
    ap.add_argument("--repeat", type=int, default=None, help="runs per figure (default 3, --quick 1)")
    args = ap.parse_args(argv)
    total = args.entries or (100_000 if args.quick else 1_000_000)
    repeat = args.repeat or (1 if args.quick else 3)
    C.header("spark_bench", args, f"entries={total} streams={STREAMS} repeat={repeat}")
    try:
        from pipeline.spark.local import local_spark
        spark = local_spark("spark-bench")
    except ImportError as exc:
        print(f"note: no Spark ({exc}); its rows read n/a", file=sys.stderr)
        spark = None
    results: Dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as workdir, \
            ServerProcess(["--save", "", "--appendonly", "no"], workdir=workdir,
                          loglevel="warning") as sluice, C.redis_server() as rsrv:
        servers = {"sluice": sluice.port}
        if rsrv is not None:
            servers["redis-server"] = rsrv.port
        rows = rows_to_write(spark, total, "w") if spark is not None else None
        for name, port in servers.items():
            client = redis.Redis(port=port)
            started = time.perf_counter()
            xadd_loop(client, stream_names("s"), total, XADD_CHUNK)
            print(f"{name}: loaded {total:,} entries in {time.perf_counter() - started:.1f} s",
                  flush=True)
            url = f"redis://127.0.0.1:{port}/0"
            if spark is not None:
                server_reader(spark, url, stream_names("s"))(False).limit(10).count()  # warm-up
            results[name] = measure_server(name, client, url, spark, total, repeat, rows)
            if name == "sluice":
                client.save()
            client.close()
        snapshot = os.path.join(workdir, "dump.rdb")
        if spark is not None:
            results["snapshot"] = {k: total / v for k, v in spark_reads(
                spark, snapshot_reader(spark, snapshot), total, repeat).items()}
    if spark is not None:
        spark.stop()
    report(results, total, repeat)
    return 0


def report(results: Dict[str, dict], total: int, repeat: int) -> None:
    sl, rd, sn = (results.get(k, {}) for k in ("sluice", "redis-server", "snapshot"))
    rate = lambda d, k: C.fmt_int(d.get(k))  # noqa: E731
    C.print_table(f"Entries/s, {total:,} entries in {STREAMS} streams (medians of {repeat})",
                  ["", "sluice", "redis-server", "snapshot file"], [
                      ["bare redis-py XRANGE loop", rate(sl, "xrange"), rate(rd, "xrange"), ""],
                      ["Spark read: count()", rate(sl, "count"), rate(rd, "count"), rate(sn, "count")],
                      ["Spark read: groupBy user", rate(sl, "groupBy"), rate(rd, "groupBy"),
                       rate(sn, "groupBy")],
                      [f"bare redis-py XADD loop (pipelines of {XADD_CHUNK})", rate(sl, "xadd"),
                       rate(rd, "xadd"), ""],
                      ["Spark sink (batch write)", rate(sl, "sink"), rate(rd, "sink"), ""],
                  ])
    targets = []
    for label, d in (("sluice", sl), ("redis-server", rd)):
        for kind in ("count", "groupBy"):
            r = ratio(d.get(kind), d.get("xrange"))
            targets.append([f"Spark {kind} from {label} / bare XRANGE loop", C.fmt_ratio(r),
                            ">= 0.5x", C.verdict(None if r is None else r >= 0.5)])
    for kind in ("count", "groupBy"):
        r = ratio(sn.get(kind), sl.get(kind))
        targets.append([f"snapshot {kind} / Spark {kind} from sluice", C.fmt_ratio(r), ">= 2x",
                        C.verdict(None if r is None else r >= 2)])
    for label, d in (("sluice", sl), ("redis-server", rd)):
        r = ratio(d.get("sink"), d.get("xadd"))
        targets.append([f"Spark sink into {label} / bare XADD loop", C.fmt_ratio(r), ">= 0.5x",
                        C.verdict(None if r is None else r >= 0.5)])
    C.print_table("Targets (ratios measured in this run)", ["", "ratio", "target", "verdict"],
                  targets)


if __name__ == "__main__":
    sys.exit(main())
