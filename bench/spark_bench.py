#!/usr/bin/env python3
"""The Spark formats beside the bare redis-py loops they wrap, in one run.

Data: N entries (default 1,000,000; --quick 100,000) spread over 4 streams
`s0..s3`, each `user u<0..999> amount <0..99999>`, loaded into a sluice-server
(examples/processes.py's ServerProcess, no persistence) and a redis-server
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
  Spark floor         count() and groupBy over a Python data source that yields the
                      same pre-built Arrow batch of 10,000 entries again and again (no
                      I/O, no decoding), in 4 tasks (one per stream, as the server
                      reads here): what Spark takes to accept entries from a Python
                      reader of this schema split that way
  Spark sink          a cached DataFrame of N rows (stream, fields map) written with
                      df.write.format("sluice"), into 4 new streams

Rates are entries/s, medians of --repeat rounds; each round runs every measure on
every contender, in alternating order (Spark warmed up first on a small stream).
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

from examples.processes import ServerProcess  # noqa: E402

STREAMS = 4
USERS = 1000
PAGE_SIZE = 10_000
XADD_CHUNK = 1000   # the sink's default batchSize, passed to it explicitly too


def stream_names(prefix: str) -> List[str]:
    return [f"{prefix}{i}" for i in range(STREAMS)]


def entry_fields(i: int) -> Dict[str, str]:
    return {"user": f"u{i % USERS}", "amount": str(i * 7919 % 100_000)}


def xadd_loop(client: redis.Redis, names: Sequence[str], total: int, chunk: int) -> None:
    """Adds `total` entries over `names` in pipelines of `chunk` XADDs."""
    pipe = client.pipeline(transaction=False)
    for i in range(total):
        pipe.xadd(names[i % len(names)], entry_fields(i))
        if len(pipe) == chunk:
            pipe.execute()
    pipe.execute()


def xrange_loop(client: redis.Redis, names: Sequence[str], page: int) -> int:
    """Entries read: every entry of `names`, XRANGE page after page."""
    read = 0
    for name in names:
        start = "-"
        while True:
            got = client.xrange(name, start, "+", count=page)
            read += len(got)
            if len(got) < page:
                break
            start = "(" + got[-1][0].decode()
    return read


def seconds(action: Callable[[], int], expect: int) -> float:
    """Seconds `action` took; it must return `expect` (the entries it handled)."""
    started = time.perf_counter()
    got = action()
    elapsed = time.perf_counter() - started
    if got != expect:
        raise RuntimeError(f"expected {expect} entries, got {got}")
    return elapsed


def into_fresh(client: redis.Redis, names: Sequence[str], write: Callable[[], None],
               expect: int) -> float:
    """Seconds `write` took to fill `names` (deleted before and after); they must then
    hold `expect` entries."""
    client.delete(*names)
    started = time.perf_counter()
    write()
    elapsed = time.perf_counter() - started
    written = sum(client.xlen(name) for name in names)
    client.delete(*names)
    if written != expect:
        raise RuntimeError(f"{written} entries written, expected {expect}")
    return elapsed


def per_user(df) -> int:
    """Count and sum of `amount` per user, collected; the entries counted."""
    from pyspark.sql import functions as F

    rows = (df.groupBy(F.col("fields")["user"].alias("user"))
            .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("fields")["amount"].cast("long")))
            .collect())
    if len(rows) != USERS:
        raise RuntimeError(f"expected {USERS} users, got {len(rows)}")
    return sum(row["n"] for row in rows)


def spark_reads(reader: Callable[[bool], object], total: int) -> Dict[str, Callable[[], float]]:
    """count() of `reader(False)`'s DataFrame, and the per-user groupBy of `reader(True)`'s."""
    return {"count": lambda: seconds(lambda: reader(False).count(), total),
            "groupBy": lambda: seconds(lambda: per_user(reader(True)), total)}


def canned_source():
    """A Python data source that reads nothing: each of its 4 partitions yields one
    pre-built Arrow batch of PAGE_SIZE entries (the `sluice` schema, the bench's fields)
    again and again, `total` rows in all (option). What Spark itself costs to take
    entries from a Python reader: no reader of this schema can go faster."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from sluice.spark.arrow_entries import EntryBatchBuilder, entry_schema

    class CannedReader(DataSourceReader):
        def __init__(self, decode: bool, total: int) -> None:
            self.decode, self.total = decode, total

        def partitions(self):
            return [InputPartition(i) for i in range(STREAMS)]

        def read(self, partition):
            page = [(f"{i + 1}-0", [k.encode() for kv in entry_fields(i).items() for k in kv])
                    for i in range(PAGE_SIZE)]
            batch = EntryBatchBuilder(self.decode).build(f"s{partition.value}", page)
            left = self.total // STREAMS + (partition.value < self.total % STREAMS)
            while left > 0:
                yield batch.slice(0, min(left, PAGE_SIZE))
                left -= PAGE_SIZE

    class CannedSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "canned-entries"

        def schema(self) -> str:
            return entry_schema(self.options.get("decode") == "true")

        def reader(self, schema):
            return CannedReader(self.options.get("decode") == "true", int(self.options["total"]))

    return CannedSource


def canned_reader(spark, total: int) -> Callable[[bool], object]:
    spark.dataSource.register(canned_source())
    return lambda decode: (spark.read.format("canned-entries").option("total", str(total))
                           .option("decode", str(decode).lower()).load())


def server_reader(spark, url: str, names: Sequence[str]) -> Callable[[bool], object]:
    return lambda decode: (spark.read.format("sluice").option("url", url)
                           .option("streams", ",".join(names)).option("pageSize", str(PAGE_SIZE))
                           .option("decode", str(decode).lower()).load())


def snapshot_reader(spark, path: str, names: Sequence[str]) -> Callable[[bool], object]:
    return lambda decode: (spark.read.format("sluice-snapshot").option("streams", ",".join(names))
                           .option("decode", str(decode).lower()).load(path))


def sink_write(rows, url: str) -> None:
    (rows.write.format("sluice").option("url", url).option("batchSize", str(XADD_CHUNK))
     .mode("append").save())


def rows_to_write(spark, total: int, prefix: str):
    """`total` rows (stream, fields) like the loaded entries, cached in Spark's memory."""
    from pyspark.sql import functions as F

    rows = spark.range(total).select(
        F.concat(F.lit(prefix), (F.col("id") % STREAMS).cast("string")).alias("stream"),
        F.create_map(F.lit("user"), F.concat(F.lit("u"), (F.col("id") % USERS).cast("string")),
                     F.lit("amount"), (F.col("id") * 7919 % 100_000).cast("string")).alias("fields"),
    ).cache()
    rows.count()
    return rows


def server_actions(spark, client: redis.Redis, url: str, rows, data: Sequence[str],
                   total: int) -> Dict[str, Callable[[], float]]:
    """Every timed action on one server: each returns its seconds."""
    scratch, written = stream_names("x"), stream_names("w")
    actions = {
        "xadd": lambda: into_fresh(client, scratch,
                                   lambda: xadd_loop(client, scratch, total, XADD_CHUNK), total),
        "xrange": lambda: seconds(lambda: xrange_loop(client, data, PAGE_SIZE), total),
    }
    if spark is not None:
        actions.update(spark_reads(server_reader(spark, url, data), total))
        actions["sink"] = lambda: into_fresh(client, written, lambda: sink_write(rows, url), total)
    return actions


def warm_up(spark, client: redis.Redis, url: str) -> None:
    """Every Spark action once on a small stream, so no timed run pays for the JVM's and
    the Python workers' first use."""
    warm = ["warm"]
    xadd_loop(client, warm, USERS, XADD_CHUNK)
    for action in spark_reads(server_reader(spark, url, warm), USERS).values():
        action()
    into_fresh(client, stream_names("w"), lambda: sink_write(rows_to_write(spark, USERS, "w"), url),
               USERS)
    client.delete(*warm)


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
        from sluice.spark.local import local_spark
        spark = local_spark("spark-bench")
    except ImportError as exc:
        print(f"note: no Spark ({exc}); its rows read n/a", file=sys.stderr)
        spark = None
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as workdir, \
            ServerProcess(["--save", "", "--appendonly", "no"], workdir=workdir,
                          loglevel="warning") as sluice, C.redis_server() as rsrv:
        ports = {"sluice": sluice.port}
        if rsrv is not None:
            ports["redis-server"] = rsrv.port
        rows = rows_to_write(spark, total, "w") if spark is not None else None
        data = stream_names("s")
        contenders: Dict[str, Dict[str, Callable[[], float]]] = {}
        for name, port in ports.items():
            client = redis.Redis(port=port)
            url = f"redis://127.0.0.1:{port}/0"
            started = time.perf_counter()
            xadd_loop(client, data, total, XADD_CHUNK)
            print(f"{name}: loaded {total:,} entries in {time.perf_counter() - started:.1f} s",
                  flush=True)
            if spark is not None:
                warm_up(spark, client, url)
            contenders[name] = server_actions(spark, client, url, rows, data, total)
        if spark is not None:
            redis.Redis(port=sluice.port).save()
            contenders["snapshot"] = spark_reads(
                snapshot_reader(spark, workdir, data), total)   # the data directory: its snapshot is found
            contenders["floor"] = spark_reads(canned_reader(spark, total), total)
        times: Dict[str, Dict[str, List[float]]] = {name: {} for name in contenders}
        for rnd in range(repeat):
            order = list(contenders) if rnd % 2 == 0 else list(reversed(contenders))
            for name in order:
                for metric, action in contenders[name].items():
                    times[name].setdefault(metric, []).append(action())
            print(f"round {rnd + 1}/{repeat} done", flush=True)
    if spark is not None:
        spark.stop()
    report({name: {metric: total / C.median(runs) for metric, runs in metrics.items()}
            for name, metrics in times.items()}, total, repeat)
    return 0


def report(results: Dict[str, dict], total: int, repeat: int) -> None:
    sl, rd, sn, fl = (results.get(k, {}) for k in ("sluice", "redis-server", "snapshot", "floor"))
    rate = lambda d, k: C.fmt_int(d.get(k))  # noqa: E731
    C.print_table(f"Entries/s, {total:,} entries in {STREAMS} streams (medians of {repeat})",
                  ["", "sluice", "redis-server", "snapshot file", "Spark floor"], [
                      ["bare redis-py XRANGE loop", rate(sl, "xrange"), rate(rd, "xrange"), "", ""],
                      ["Spark read: count()", rate(sl, "count"), rate(rd, "count"), rate(sn, "count"),
                       rate(fl, "count")],
                      ["Spark read: groupBy user", rate(sl, "groupBy"), rate(rd, "groupBy"),
                       rate(sn, "groupBy"), rate(fl, "groupBy")],
                      [f"bare redis-py XADD loop (pipelines of {XADD_CHUNK})", rate(sl, "xadd"),
                       rate(rd, "xadd"), "", ""],
                      ["Spark sink (batch write)", rate(sl, "sink"), rate(rd, "sink"), "", ""],
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
    for kind in ("count", "groupBy"):
        r = ratio(fl.get(kind), sl.get(kind))
        targets.append([f"Spark floor {kind} / Spark {kind} from sluice (a free reader "
                        f"in 4 tasks)", C.fmt_ratio(r), "", ""])
    C.print_table("Targets (ratios measured in this run)", ["", "ratio", "target", "verdict"],
                  targets)


if __name__ == "__main__":
    sys.exit(main())
