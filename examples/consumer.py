"""A consumer group on the `totals` stream: prints each window's total as it arrives
and acknowledges it (XREADGROUP + XACK), the way a downstream service would.

    python -m examples.consumer --url redis://127.0.0.1:6379 --stream totals

Runs until SIGTERM or Ctrl-C; the last line printed is `consumed N`."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import Callable, Optional

import redis

from examples.stage import run_stage

BLOCK_MS = 500
COUNT = 100


def ensure_group(client: redis.Redis, stream: str, group: str) -> None:
    """The group, reading from the stream's first entry, created with the stream if need be."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if not str(exc).startswith("BUSYGROUP"):
            raise


def describe(fields: dict) -> str:
    """One total as a line: key, window (UTC), count and amount."""
    text = {k.decode(): v.decode() for k, v in fields.items()}
    start = datetime.fromtimestamp(int(text.pop("window_start", 0)) / 1000, timezone.utc)
    end = datetime.fromtimestamp(int(text.pop("window_end", 0)) / 1000, timezone.utc)
    rest = " ".join(f"{k}={v}" for k, v in text.items())
    return f"[{start:%H:%M:%S}, {end:%H:%M:%S}) {rest}"


def consume(client: redis.Redis, stream: str, group: str, consumer: str,
            stop: Callable[[], bool], show: Callable[[str], None] = print) -> int:
    """Reads new entries for `consumer`, shows and acknowledges each batch, until
    `stop()`; returns how many entries it acknowledged."""
    consumed = 0
    while not stop():
        reply = client.xreadgroup(group, consumer, {stream: ">"}, count=COUNT, block=BLOCK_MS)
        for _, entries in reply or ():
            for entry_id, fields in entries:
                show(f"total {entry_id.decode()} {describe(fields)}")
            consumed += client.xack(stream, group, *(entry_id for entry_id, _ in entries))
    return consumed


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--stream", default="totals")
    ap.add_argument("--group", default="dashboard")
    ap.add_argument("--consumer", default="printer")
    args = ap.parse_args(argv)
    client = redis.Redis.from_url(args.url)
    ensure_group(client, args.stream, args.group)
    return run_stage(lambda stop: consume(client, args.stream, args.group, args.consumer, stop,
                                          show=lambda line: print(line, flush=True)), "consumed")


if __name__ == "__main__":
    sys.exit(main())
