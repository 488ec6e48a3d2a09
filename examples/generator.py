"""Page views into a stream at a set rate for a bounded time: the example pipeline's source.

    python -m examples.generator --url redis://127.0.0.1:6379 --rate 500 --seconds 60

Each entry is `user u17 page /cart amount 12.34 ts <event time, ms>`. The event time
lags the wall clock by up to `--max-lateness` seconds (chosen at random), so entries
arrive slightly out of event-time order, as they do from real clients; a downstream
watermark longer than that lateness never drops one. The last line printed is
`produced N`."""
from __future__ import annotations

import argparse
import random
import sys
import time
from decimal import Decimal
from typing import Callable, Optional

import redis

from examples.stage import run_stage

USERS = [f"u{i}" for i in range(1, 21)]
PAGES = ["/", "/search", "/product", "/cart", "/checkout", "/help"]
TICKS_PER_SECOND = 20


def page_view(rng: random.Random, now_ms: int, max_lateness_ms: int) -> dict:
    """One event's fields: who viewed what, what it was worth, and when it happened."""
    return {
        "user": rng.choice(USERS),
        "page": rng.choice(PAGES),
        "amount": str(Decimal(rng.randrange(0, 10_000)) / 100),
        "ts": str(now_ms - rng.randrange(0, max_lateness_ms + 1)),
    }


def produce(client: redis.Redis, stream: str, rate: float, seconds: float,
            max_lateness_ms: int = 2000, seed: int = 1,
            stop: Optional[Callable[[], bool]] = None) -> int:
    """XADDs `rate` events per second (pipelined, one round trip per tick), `rate *
    seconds` in all, unless `stop()` says to end sooner; returns how many were added."""
    rng = random.Random(seed)
    total = int(rate * seconds)
    started = time.monotonic()
    produced = 0
    while produced < total and not (stop and stop()):
        due = min(total, int((time.monotonic() - started) * rate) + 1)
        if due > produced:
            pipe = client.pipeline(transaction=False)
            now_ms = int(time.time() * 1000)
            for _ in range(due - produced):
                pipe.xadd(stream, page_view(rng, now_ms, max_lateness_ms))
            pipe.execute()
            produced = due
        time.sleep(1 / TICKS_PER_SECOND)
    return produced


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--stream", default="events")
    ap.add_argument("--rate", type=float, default=500.0, help="events per second")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to produce")
    ap.add_argument("--max-lateness", type=float, default=2.0,
                    help="event times lag the clock by up to this many seconds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    client = redis.Redis.from_url(args.url)
    return run_stage(lambda stop: produce(client, args.stream, args.rate, args.seconds,
                                          int(args.max_lateness * 1000), args.seed, stop),
                     "produced")


if __name__ == "__main__":
    sys.exit(main())
