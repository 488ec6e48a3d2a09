"""`sluice-top [URL]`: the live view, refreshed every `--interval` seconds, or one
reading with `--once` (`--json` for scripts). Keys: s sort, r reverse, / filter (Enter
applies, Esc clears), q quit."""
from __future__ import annotations

import argparse
import json
import os
import select
import sys
import termios
import time
import tty
from typing import List, Optional
from urllib.parse import urlsplit, urlunsplit

import redis

from sluice.top.history import History
from sluice.top.ordering import SORT_KEYS, Ordering
from sluice.top.sample import take_sample

ESCAPE, BACKSPACES, ENTERS = "\x1b", ("\x7f", "\x08"), ("\r", "\n")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sluice-top", description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default="redis://127.0.0.1:6379/0",
                        help="redis:// or rediss:// URL, user and password in it or below "
                             "(default: %(default)s)")
    parser.add_argument("--user", help="ACL user name (overrides the URL's)")
    parser.add_argument("--password", default=os.environ.get("SLUICE_TOP_PASSWORD"),
                        help="password (overrides the URL's; default: $SLUICE_TOP_PASSWORD)")
    parser.add_argument("--cacert", help="CA certificate file for a rediss:// server")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between readings (default: 2)")
    parser.add_argument("--history", type=float, default=300.0,
                        help="seconds of rates the sparklines show (default: 300)")
    parser.add_argument("--sort", choices=list(SORT_KEYS), default="name", help="sort streams by (default: name)")
    parser.add_argument("--reverse", action="store_true", help="reverse the sort")
    parser.add_argument("--filter", default="", help="show only streams whose name contains this")
    parser.add_argument("--once", action="store_true",
                        help="take two readings --interval apart (for the rates), print, exit")
    parser.add_argument("--json", action="store_true", help="with --once: print JSON")
    args = parser.parse_args(argv)
    if args.interval <= 0:
        parser.error("--interval must be above 0")
    if args.json and not args.once:
        parser.error("--json goes with --once")
    return args


def connect(args: argparse.Namespace) -> redis.Redis:
    # Names that are not UTF-8 come back as str and go out again as the same bytes.
    options = {"decode_responses": True, "encoding_errors": "surrogateescape", "socket_timeout": 10}
    if args.user:
        options["username"] = args.user
    if args.password:
        options["password"] = args.password
    if args.cacert:
        options["ssl_ca_certs"] = args.cacert
    return redis.Redis.from_url(args.url, **options)


def shown_url(url: str) -> str:
    """The URL without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{parts.hostname}:{parts.port or 6379}"))


def once(client: redis.Redis, args: argparse.Namespace, ordering: Ordering) -> None:
    from sluice.top.view import as_json, render

    history = History(args.history)
    history.add(take_sample(client))
    time.sleep(args.interval)
    sample = take_sample(client)
    history.add(sample)
    if args.json:
        print(json.dumps(as_json(sample, history, ordering), indent=2))
    else:
        from rich.console import Console
        Console().print(render(sample, history, ordering, shown_url(args.url)))


class Keys:
    """The terminal in cbreak mode while the view runs: keys arrive one by one, unechoed."""

    def __enter__(self) -> "Keys":
        self.fd = sys.stdin.fileno()
        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def read(self, timeout: float) -> Optional[str]:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        return os.read(self.fd, 1).decode(errors="replace") if ready else None


def live(client: redis.Redis, args: argparse.Namespace, ordering: Ordering) -> None:
    if not sys.stdin.isatty():
        raise SystemExit("sluice-top: the live view needs a terminal; --once (--json) prints one reading")
    from rich.live import Live
    from rich.text import Text

    from sluice.top.view import render

    history = History(args.history)
    url = shown_url(args.url)
    typing: Optional[str] = None      # the filter being typed, after '/'
    screen = Text("connecting...")
    sample = None
    due = 0.0
    with Keys() as keys, Live(screen, screen=True, auto_refresh=False) as view:
        while True:
            if time.monotonic() >= due:
                due = time.monotonic() + args.interval
                try:
                    sample = take_sample(client)
                    history.add(sample)
                except redis.RedisError as error:
                    sample = None
                    screen = Text(f"{url}: {error} (trying again every {args.interval:g}s)", style="red")
            if sample is not None:
                screen = render(sample, history, ordering, url, typing)
            view.update(screen, refresh=True)
            key = keys.read(due - time.monotonic())
            while key is not None:
                if typing is not None:
                    if key in ENTERS:
                        ordering.filter, typing = typing, None
                    elif key == ESCAPE:
                        typing = None
                    elif key in BACKSPACES:
                        typing = typing[:-1]
                    elif key.isprintable():
                        typing += key
                elif key == "q":
                    return
                elif key == "s":
                    ordering.next_sort()
                elif key == "r":
                    ordering.reverse = not ordering.reverse
                elif key == "/":
                    typing = ""
                elif key == ESCAPE:
                    ordering.filter = ""
                key = keys.read(0)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    try:
        import rich  # noqa: F401
    except ImportError:
        raise SystemExit("sluice-top needs rich: pip install 'sluice[top]'")
    ordering = Ordering(args.sort, args.reverse, args.filter)
    client = connect(args)
    try:
        if args.once:
            once(client, args, ordering)
        else:
            live(client, args, ordering)
    except redis.RedisError as error:
        raise SystemExit(f"sluice-top: {shown_url(args.url)}: {error}")
    except KeyboardInterrupt:
        pass
    finally:
        client.close()


if __name__ == "__main__":
    main()
