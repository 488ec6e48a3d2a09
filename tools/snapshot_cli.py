"""sluice-snapshot: inspect and check a Sluice snapshot file (dump.sluice by default;
it starts with the bytes \\x89SLUICE\\n).

    sluice-snapshot info   FILE [--json]          format version, sizes, totals
    sluice-snapshot verify FILE [--progress]      every checksum and record, as a load would
    sluice-snapshot dump   FILE [-o OUT] [--progress]   every record as a JSON line

dump writes one JSON object per record (see persist.snapshot.iter_records): byte
strings (keys, values, field and consumer names) appear as JSON strings when they
are valid UTF-8, otherwise as {"base64": "..."}; IDs are "ms-seq" strings.

A progress bar goes to stderr for verify and dump when stderr is a terminal, or
with --progress. Exit codes: 0 fine; 1 the file is damaged (file and offset on
stderr) or is not a snapshot (a Redis RDB file is named as such: Sluice does not read
RDB); 2 usage error or the file cannot be read.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from typing import Any, Optional, TextIO

from tqdm import tqdm

from persist import CorruptFileError, ForeignFileError, iter_records, snapshot_info, verify_snapshot

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE = 0, 1, 2


def jsonable(value: Any) -> Any:
    """Bytes as text when they are UTF-8, else {"base64": ...}; containers recursively."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


class ProgressBar:
    """progress(done, total) callback drawing a tqdm bar of bytes on stderr."""

    def __init__(self, path: str, enabled: bool) -> None:
        self.bar = tqdm(total=os.path.getsize(path), unit="B", unit_scale=True,
                        file=sys.stderr, disable=not enabled, leave=False)

    def __call__(self, done: int, total: Optional[int]) -> None:
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    info = snapshot_info(args.file)
    if args.json:
        print(json.dumps(info), file=out)
        return EXIT_OK
    ratio = info["raw_bytes"] / info["file_bytes"] if info["file_bytes"] else 0
    rows = [("file", info["path"]), ("format version", info["format_version"]),
            ("size", f"{info['file_bytes']:,} bytes ({info['raw_bytes']:,} uncompressed, "
                     f"{ratio:.1f}x) in {info['blocks']:,} blocks"),
            ("keys", f"{info['keys']:,} ({info['streams']:,} streams)"),
            ("stream entries", f"{info['entries']:,}"),
            ("groups", f"{info['groups']:,}"),
            ("pending entries", f"{info['pending']:,}")]
    for name, value in rows:
        print(f"{name + ':':17}{value}", file=out)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    bar = ProgressBar(args.file, args.progress)
    try:
        totals = verify_snapshot(args.file, progress=bar)
    finally:
        bar.close()
    print(f"{args.file}: OK ({totals['keys']:,} keys, {totals['entries']:,} entries, "
          f"{totals['pending']:,} pending, {totals['bytes']:,} bytes)", file=out)
    return EXIT_OK


def cmd_dump(args: argparse.Namespace, out: TextIO) -> int:
    bar = ProgressBar(args.file, args.progress)
    target = open(args.output, "w", encoding="utf-8") if args.output else out
    try:
        for record in iter_records(args.file, progress=bar):
            target.write(json.dumps(jsonable(record), ensure_ascii=False))
            target.write("\n")
    finally:
        bar.close()
        if args.output:
            target.close()
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sluice-snapshot", description=__doc__.split("\n\n")[0],
                                epilog="Exit codes: 0 fine, 1 damaged or not a snapshot, "
                                       "2 usage error or unreadable file.")
    sub = p.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="format version, sizes and totals (reads only the "
                                       "block headers and the last block)")
    info.add_argument("--json", action="store_true", help="one JSON object")
    verify = sub.add_parser("verify", help="check every checksum and record")
    dump = sub.add_parser("dump", help="every record as one JSON object per line; bytes "
                                       "as UTF-8 text, else {\"base64\": ...}")
    dump.add_argument("-o", "--output", help="write to this file instead of stdout")
    for a in (info, verify, dump):
        a.add_argument("file", help="the snapshot file")
    for a in (verify, dump):
        a.add_argument("--progress", action="store_true", default=sys.stderr.isatty(),
                       help="show a progress bar on stderr (default: when it is a terminal)")
    return p


COMMANDS = {"info": cmd_info, "verify": cmd_verify, "dump": cmd_dump}


def main(argv: Optional[list[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args, sys.stdout)
    except CorruptFileError as e:
        print(f"sluice-snapshot: damaged: {e}", file=sys.stderr)
        return EXIT_DAMAGED
    except ForeignFileError as e:
        print(f"sluice-snapshot: {e}", file=sys.stderr)
        return EXIT_DAMAGED
    except BrokenPipeError:
        # The reader went away (dump | head): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as e:
        print(f"sluice-snapshot: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
