"""sluice-aof: check, fix, inspect, replay and rewrite an append-only file.

    sluice-aof check   PATH            validate; report the first bad offset
    sluice-aof fix     PATH [--yes]    truncate the last file to its last whole command
    sluice-aof info    PATH            commands per name and per key, file sizes
    sluice-aof replay  PATH (--to-server HOST:PORT | --to-dir DIR)
    sluice-aof rewrite PATH [--resp]   rewrite into one compact base (in place)

PATH is a data directory, its appendonlydir, a manifest, or a single RESP file.
Exit codes: 0 fine, 1 damaged (or the action failed), 2 usage error.
"""
from __future__ import annotations

import argparse
import glob
import mmap
import os
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Optional

from tqdm import tqdm

from persist import recovery, snapshot
from persist.errors import CorruptFileError, PersistError, TruncatedFileError
from persist.manifest import Manifest
from persist.redis_rdb import refuse_rdb
from persist.resp_log import CommandReader, LogBuffer

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE = 0, 1, 2


@dataclass
class Target:
    """What PATH names: a multi-part directory or one file."""
    files: list                    # (path, kind) in replay order; kind b / i / file
    aof_dir: Optional[str] = None  # the appendonlydir
    manifest: Optional[Manifest] = None


def locate(path: str) -> Target:
    """Resolves PATH (see the module docstring); PersistError if it names no AOF,
    ForeignFileError if the file or the base is a Redis RDB file."""
    path = os.path.abspath(path)
    if os.path.isfile(path) and not path.endswith(".manifest"):
        refuse_rdb(path, "an AOF file")
        return Target([(path, "file")])
    if os.path.isfile(path):
        aof_dir, manifest_path = os.path.dirname(path), path
    else:
        candidates = glob.glob(os.path.join(path, "*.manifest")) or \
            glob.glob(os.path.join(path, "*", "*.manifest"))
        if len(candidates) != 1:
            raise PersistError(f"{path}: no AOF manifest found (or more than one)")
        manifest_path = candidates[0]
        aof_dir = os.path.dirname(manifest_path)
    with open(manifest_path, "rb") as fh:
        manifest = Manifest.parse(fh.read(), manifest_path)
    files = [(os.path.join(aof_dir, f.name), f.kind) for f in manifest.files()]
    if manifest.base is not None:
        refuse_rdb(files[0][0], recovery.BASE_FORMATS)
    return Target(files, aof_dir, manifest)


def progress_bar(total: int, desc: str, enabled: bool):
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not enabled,
                file=sys.stderr, leave=False)


def commands_of(path: str, bar) -> Iterator[list]:
    """Every command of a RESP file, advancing the progress bar by bytes."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            reader = CommandReader(data, path)
            try:
                done = 0
                for n, argv in enumerate(reader, 1):
                    if n % 4096 == 0:
                        bar.update(reader.offset - done)
                        done = reader.offset
                    yield argv
                bar.update(reader.offset - done)
            finally:
                reader.close()


def check_files(target: Target, show: bool) -> Optional[CorruptFileError]:
    """The first damage found (a TruncatedFileError when a file ends early), or None."""
    total = sum(os.path.getsize(p) for p, _ in target.files if os.path.exists(p))
    with progress_bar(total, "checking", show) as bar:
        for path, kind in target.files:
            if not os.path.exists(path):
                return CorruptFileError(path, 0, "file named in the manifest is missing")
            try:
                if kind == "b" and snapshot.is_snapshot(path):
                    snapshot.verify_snapshot(path)
                    bar.update(os.path.getsize(path))
                else:
                    for _ in commands_of(path, bar):
                        pass
            except CorruptFileError as exc:
                return exc
    return None


def cmd_check(args) -> int:
    target = locate(args.path)
    damage = check_files(target, args.progress)
    if damage is None:
        print(f"AOF is valid ({len(target.files)} file(s))")
        return EXIT_OK
    print(f"AOF is damaged: {damage}", file=sys.stderr)
    if isinstance(damage, TruncatedFileError) and damage.path == target.files[-1][0]:
        print("It ends inside a command: 'sluice-aof fix' truncates it to the last whole "
              "one.", file=sys.stderr)
    return EXIT_DAMAGED


def cmd_fix(args) -> int:
    target = locate(args.path)
    damage = check_files(target, args.progress)
    if damage is None:
        print("AOF is valid: nothing to fix")
        return EXIT_OK
    if damage.path != target.files[-1][0] or target.files[-1][1] == "b":
        print(f"AOF is damaged: {damage}\nOnly the last incremental file can be truncated; "
              "this damage is in an earlier file.", file=sys.stderr)
        return EXIT_DAMAGED
    size = os.path.getsize(damage.path)
    print(f"{damage}\nThis will truncate {damage.path} to {damage.offset} bytes, dropping "
          f"{size - damage.offset} bytes.")
    if not args.yes:
        answer = input("Continue? [y/N]: ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Aborted.")
            return EXIT_DAMAGED
    os.truncate(damage.path, damage.offset)
    print("Successfully truncated AOF")
    return EXIT_OK


def cmd_info(args) -> int:
    target = locate(args.path)
    total = sum(os.path.getsize(p) for p, _ in target.files)
    by_name: Counter = Counter()
    by_key: Counter = Counter()
    with progress_bar(total, "reading", args.progress) as bar:
        for path, kind in target.files:
            size = os.path.getsize(path)
            if kind == "b" and snapshot.is_snapshot(path):
                info = snapshot.snapshot_info(path)
                print(f"{os.path.basename(path)}  snapshot base  {size} bytes  "
                      + "  ".join(f"{k}={v}" for k, v in sorted(info.items())
                                  if isinstance(v, (int, float, str))))
                bar.update(size)
                continue
            count = 0
            try:
                for argv in commands_of(path, bar):
                    count += 1
                    name = argv[0].decode("latin-1").upper()
                    by_name[name] += 1
                    if len(argv) > 1 and name not in ("SELECT", "MULTI", "EXEC"):
                        by_key[argv[1]] += 1
            except CorruptFileError as exc:
                print(f"damaged: {exc}", file=sys.stderr)
                return EXIT_DAMAGED
            print(f"{os.path.basename(path)}  {'base' if kind == 'b' else 'incr'}  "
                  f"{size} bytes  {count} commands")
    print(f"total: {sum(by_name.values())} commands")
    for name, n in by_name.most_common():
        print(f"  {name:<14} {n}")
    if by_key:
        print("keys (most written):")
        for key, n in by_key.most_common(args.top):
            print(f"  {key.decode('utf-8', 'backslashreplace'):<30} {n}")
    return EXIT_OK


def load_engine(target: Target, show: bool):
    """A fresh in-memory Engine holding what the AOF describes."""
    from engine import Engine
    engine = Engine()
    total = sum(os.path.getsize(p) for p, _ in target.files)
    with progress_bar(total, "loading", show) as bar:
        for path, kind in target.files:
            if kind == "b" and snapshot.is_snapshot(path):
                snapshot.load_snapshot(engine, path)
            else:
                with recovery.loading(engine):
                    recovery.replay_file(engine, path)
            bar.update(os.path.getsize(path))
    return engine


def cmd_replay(args) -> int:
    target = locate(args.path)
    if args.to_dir:
        return replay_to_dir(target, args)
    return replay_to_server(target, args)


def replay_to_dir(target: Target, args) -> int:
    """Writes a new data directory (AOF with a fresh base) holding the AOF's state."""
    from persist.durability import Durability
    if os.path.exists(os.path.join(args.to_dir, "appendonlydir")):
        print(f"{args.to_dir} already holds an appendonlydir", file=sys.stderr)
        return EXIT_USAGE
    engine = load_engine(target, args.progress)
    durability = Durability(engine, args.to_dir, appendonly=True, appendfsync="no")
    durability.start()
    durability.close(save=False)
    print(f"Wrote {args.to_dir}/appendonlydir")
    return EXIT_OK


def replay_to_server(target: Target, args) -> int:
    """Sends every command to a running server, pipelined in batches."""
    import redis
    host, _, port = args.to_server.rpartition(":")
    conn = redis.Connection(host=host or "127.0.0.1", port=int(port), password=args.password)
    conn.connect()
    total = sum(os.path.getsize(p) for p, _ in target.files)
    sent = errors = 0
    batch = LogBuffer()
    pending = 0

    def send() -> int:
        nonlocal pending
        conn.send_packed_command([batch.take()], check_health=False)
        bad = 0
        for _ in range(pending):
            try:
                conn.read_response()
            except redis.ResponseError as exc:
                bad += 1
                if bad <= 5:
                    print(f"server error: {exc}", file=sys.stderr)
        pending = 0
        return bad

    with progress_bar(total, "replaying", args.progress) as bar:
        for path, kind in target.files:
            if kind == "b" and snapshot.is_snapshot(path):
                print(f"{path}: a snapshot base cannot be sent over RESP; use --to-dir or "
                      "rewrite with --resp first", file=sys.stderr)
                return EXIT_USAGE
            for argv in commands_of(path, bar):
                batch.append_command(argv)
                pending += 1
                sent += 1
                if pending >= 1000:
                    errors += send()
            if pending:
                errors += send()
    conn.disconnect()
    print(f"Replayed {sent} commands, {errors} error replies")
    return EXIT_OK if errors == 0 else EXIT_DAMAGED


def cmd_rewrite(args) -> int:
    """Loads the directory and rewrites it into a new base plus an empty increment."""
    from engine import Engine
    target = locate(args.path)
    if target.aof_dir is None:
        print("rewrite works on an appendonlydir (with its manifest)", file=sys.stderr)
        return EXIT_USAGE
    data_dir, dirname = os.path.split(target.aof_dir)
    filename = os.path.basename(
        glob.glob(os.path.join(target.aof_dir, "*.manifest"))[0])[:-len(".manifest")]
    engine = Engine(dir=data_dir, appendonly=True, appendfsync="no", appenddirname=dirname,
                    appendfilename=filename, aof_use_rdb_preamble=not args.resp)
    before = sum(os.path.getsize(p) for p, _ in target.files)
    engine.execute("BGREWRITEAOF")
    engine.close(save=False)
    after = sum(os.path.getsize(p) for p, _ in locate(target.aof_dir).files)
    print(f"Rewrote {target.aof_dir}: {before} -> {after} bytes")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sluice-aof", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="action", required=True)

    def action(name: str, func, help_text: str) -> argparse.ArgumentParser:
        a = sub.add_parser(name, help=help_text)
        a.add_argument("path")
        a.add_argument("--progress", action="store_true", default=sys.stderr.isatty(),
                       help="show a progress bar (default: when stderr is a terminal)")
        a.set_defaults(func=func)
        return a

    action("check", cmd_check, "validate; report the first bad offset")
    action("fix", cmd_fix, "truncate to the last whole command").add_argument(
        "--yes", action="store_true", help="do not ask for confirmation")
    action("info", cmd_info, "counts per command and key").add_argument(
        "--top", type=int, default=20, help="keys to list")
    replay = action("replay", cmd_replay, "replay into a server or a new directory")
    where = replay.add_mutually_exclusive_group(required=True)
    where.add_argument("--to-server", metavar="HOST:PORT")
    where.add_argument("--to-dir", metavar="DIR")
    replay.add_argument("--password", default=None)
    action("rewrite", cmd_rewrite, "rewrite into one compact base").add_argument(
        "--resp", action="store_true", help="a RESP base (as aof-use-rdb-preamble no)")
    return p


def main(argv: Optional[list] = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    try:
        return args.func(args)
    except (PersistError, OSError) as exc:
        print(f"sluice-aof: {exc}", file=sys.stderr)
        return EXIT_DAMAGED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
