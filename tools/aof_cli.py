"""sluice-aof: check, fix, inspect, replay and rewrite an append-only file.

    sluice-aof check   PATH            validate; report the first bad offset
    sluice-aof fix     PATH [--yes]    truncate the last file to its last whole command
    sluice-aof info    PATH            commands per name and per key, file sizes
    sluice-aof replay  PATH (--to-server HOST:PORT | --to-dir DIR)
    sluice-aof rewrite PATH [--resp]   rewrite into one compact base (in place)

What PATH may be and the exit codes: PATH_HELP below (the --help epilog).
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import mmap
import os
import sys
from collections import Counter
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, Optional, TypeVar

from tqdm import tqdm

from engine import command_keys
from persist import (AOF_BASE_FORMATS, LOCK_NAME, CommandReader, CorruptFileError, DirectoryInUse,
                     DirectoryLock, LogBuffer, Manifest, PersistError, TruncatedFileError,
                     is_snapshot, load_snapshot, loading, refuse_rdb, replay_file, snapshot_info,
                     verify_snapshot)

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE, EXIT_IN_USE = 0, 1, 2, 3
STEADY_TRIES = 5               # attempts at reading a directory a live server changes
T = TypeVar("T")
PATH_HELP = """\
PATH is one of:
  a data directory          (the one holding appendonlydir/)
  an appendonlydir          (the one holding the *.manifest)
  a manifest                (appendonlydir/appendonly.aof.manifest)
  a single file             a RESP incremental or base file, or a snapshot base
                            (written with aof-use-rdb-preamble yes); rewrite needs
                            one of the first three

check, info and replay only read, and work on the directory of a running server.
fix, rewrite and replay --to-dir write: they refuse a data directory that a
running server or embedded Engine owns (it holds sluice.lock locked).

Exit codes:
  0  fine (valid, done)
  1  damaged, or the action failed or was not confirmed
  2  usage error
  3  the data directory is in use by another process
"""


@dataclass
class Target:
    """What PATH names: a multi-part directory or one file."""
    files: list                    # (path, kind) in replay order; kind b / i / file
    aof_dir: Optional[str] = None  # the appendonlydir
    manifest: Optional[Manifest] = None
    manifest_path: str = ""

    @property
    def owner_dir(self) -> Optional[str]:
        """The data directory a server or Engine would own (and lock) for these
        files: the appendonlydir's parent; for a single file, that of the
        appendonlydir it lies in, or its own folder if that is a data directory."""
        if self.aof_dir is not None:
            return os.path.dirname(self.aof_dir)
        folder = os.path.dirname(self.files[0][0])
        if manifests_in(folder):
            return os.path.dirname(folder)
        if os.path.exists(os.path.join(folder, LOCK_NAME)):
            return folder
        return None


def locate(path: str) -> Target:
    """Resolves PATH (see PATH_HELP); PersistError if it names no AOF,
    ForeignFileError if the file or the base is a Redis RDB file."""
    path = os.path.abspath(path)
    if os.path.isfile(path) and not path.endswith(".manifest"):
        refuse_rdb(path, "an AOF file")
        return Target([(path, "file")])
    if os.path.isfile(path):
        aof_dir, manifest_path = os.path.dirname(path), path
    else:
        candidates = manifests_in(path) or manifests_in(os.path.join(path, "*"))
        if len(candidates) != 1:
            raise PersistError(f"{path}: no AOF manifest found (or more than one)")
        manifest_path = candidates[0]
        aof_dir = os.path.dirname(manifest_path)
    with open(manifest_path, "rb") as fh:
        manifest = Manifest.parse(fh.read(), manifest_path)
    files = [(os.path.join(aof_dir, f.name), f.kind) for f in manifest.files()]
    if manifest.base is not None:
        refuse_rdb(files[0][0], AOF_BASE_FORMATS)
    return Target(files, aof_dir, manifest, manifest_path)


def manifests_in(pattern: str) -> list:
    """The manifests in the directories `pattern` matches; not the temporary one a
    live owner writes before renaming it over the real one."""
    return [p for p in glob.glob(os.path.join(pattern, "*.manifest"))
            if not os.path.basename(p).startswith("temp-")]


def read_steady(path: str, attempt: Callable[[Target], T]) -> T:
    """attempt(locate(path)), tried again when it failed because the files changed
    under it: a running server's rewrite swapped the manifest and deleted the files
    the old one named, or the last file grew past a write caught half-way. Damage
    that stays put is raised."""
    for _ in range(STEADY_TRIES - 1):
        target = locate(path)
        before = _shape(target)
        try:
            return attempt(target)
        except (PersistError, OSError):
            try:
                moved = _shape(locate(path)) != before
            except (PersistError, OSError):
                moved = True
            if not moved:
                raise
    return attempt(locate(path))


def _shape(target: Target) -> tuple:
    """The manifest and the size of the last file: what a live owner changes."""
    last = target.files[-1][0] if target.files else ""
    try:
        size = os.path.getsize(last)
    except OSError:
        size = -1
    return target.manifest, size


def is_snapshot_file(path: str, kind: str) -> bool:
    """A snapshot base: a base file (or a single file) that starts with the
    snapshot's magic; everything else is RESP."""
    return kind in ("b", "file") and is_snapshot(path)


def progress_bar(total: int, desc: str, enabled: bool):
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not enabled,
                file=sys.stderr, leave=False)


def commands_of(path: str, bar, opened: Optional[BinaryIO] = None) -> Iterator[list]:
    """Every command of a RESP file (read from `opened` if given, which stays open),
    advancing the progress bar by bytes."""
    with open(path, "rb") if opened is None else contextlib.nullcontext(opened) as fh:
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


def check_files(target: Target, show: bool) -> None:
    """Raises the first damage found (a TruncatedFileError when a file ends early)."""
    total = sum(os.path.getsize(p) for p, _ in target.files if os.path.exists(p))
    with progress_bar(total, "checking", show) as bar:
        for path, kind in target.files:
            if not os.path.exists(path):
                raise CorruptFileError(path, 0, "file named in the manifest is missing")
            if is_snapshot_file(path, kind):
                verify_snapshot(path)
                bar.update(os.path.getsize(path))
            else:
                for _ in commands_of(path, bar):
                    pass


def damage_of(path: str, show: bool) -> tuple:
    """(target, the first damage or None), read steadily."""
    def attempt(target: Target) -> tuple:
        check_files(target, show)
        return target, None
    try:
        return read_steady(path, attempt)
    except CorruptFileError as exc:
        return locate(path), exc


def fixable(target: Target, damage: CorruptFileError) -> bool:
    """Whether fix may truncate there: damage in the last file, not a base."""
    return damage.path == target.files[-1][0] and target.files[-1][1] != "b"


def tail_cut(target: Target, damage: CorruptFileError) -> bool:
    """Whether the damage is a cut at the end of the last file: what a crash leaves,
    and what the server drops when it loads (aof-load-truncated)."""
    return isinstance(damage, TruncatedFileError) and fixable(target, damage)


def report_damage(target: Target, damage: CorruptFileError) -> int:
    print(f"AOF is damaged: {damage}", file=sys.stderr)
    if tail_cut(target, damage):
        print("It ends inside a command: 'sluice-aof fix' truncates it to the last whole "
              "one.", file=sys.stderr)
    elif fixable(target, damage):
        print("'sluice-aof fix' truncates the file there (what follows is lost).",
              file=sys.stderr)
    return EXIT_DAMAGED


def cmd_check(args) -> int:
    target, damage = damage_of(args.path, args.progress)
    if damage is None:
        print(f"AOF is valid ({len(target.files)} file(s))")
        return EXIT_OK
    return report_damage(target, damage)


def cmd_fix(args) -> int:
    owner = locate(args.path).owner_dir
    with DirectoryLock(owner) if owner else contextlib.nullcontext():
        target, damage = damage_of(args.path, args.progress)
        if damage is None:
            print("AOF is valid: nothing to fix")
            return EXIT_OK
        if not fixable(target, damage):
            print(f"AOF is damaged: {damage}\nOnly the last incremental file can be "
                  "truncated; this damage is in an earlier file.", file=sys.stderr)
            return EXIT_DAMAGED
        size = os.path.getsize(damage.path)
        print(f"{damage}\nThis will truncate {damage.path} to {damage.offset} bytes, "
              f"dropping {size - damage.offset} bytes.")
        if not args.yes and not confirmed():
            return EXIT_DAMAGED
        os.truncate(damage.path, damage.offset)
    print("Successfully truncated AOF")
    return EXIT_OK


def confirmed() -> bool:
    """The user's answer; no answer (stdin at its end: no terminal) is a refusal
    that says how to go without asking."""
    try:
        answer = input("Continue? [y/N]: ")
    except EOFError:
        print("\nNo answer (stdin is not a terminal): nothing was truncated. Pass --yes "
              "to truncate without asking.", file=sys.stderr)
        return False
    if answer.strip().lower() not in ("y", "yes"):
        print("Aborted.")
        return False
    return True


def cmd_info(args) -> int:
    def attempt(target: Target) -> tuple:
        total = sum(os.path.getsize(p) for p, _ in target.files)
        lines: list = []
        by_name: Counter = Counter()
        by_key: Counter = Counter()
        with progress_bar(total, "reading", args.progress) as bar:
            for path, kind in target.files:
                size = os.path.getsize(path)
                if is_snapshot_file(path, kind):
                    info = snapshot_info(path)
                    lines.append(f"{os.path.basename(path)}  snapshot base  {size} bytes  "
                                 + "  ".join(f"{k}={v}" for k, v in sorted(info.items())
                                             if isinstance(v, (int, float, str))))
                    bar.update(size)
                    continue
                count = 0
                for argv in commands_of(path, bar):
                    count += 1
                    by_name[argv[0].decode("latin-1").upper()] += 1
                    by_key.update(command_keys(argv))
                lines.append(f"{os.path.basename(path)}  {'base' if kind == 'b' else 'incr'}  "
                             f"{size} bytes  {count} commands")
        return lines, by_name, by_key
    try:
        lines, by_name, by_key = read_steady(args.path, attempt)
    except CorruptFileError as exc:
        print(f"damaged: {exc}", file=sys.stderr)
        return EXIT_DAMAGED
    print("\n".join(lines))
    print(f"total: {sum(by_name.values())} commands")
    for name, n in by_name.most_common():
        print(f"  {name:<14} {n}")
    if by_key:
        print("keys (most written):")
        for key, n in by_key.most_common(args.top):
            print(f"  {key.decode('utf-8', 'backslashreplace'):<30} {n}")
    return EXIT_OK


def load_into(engine, target: Target, show: bool) -> None:
    """Loads what the AOF describes into `engine`. A cut at the end of the last file
    is dropped with a warning, as the server does with aof-load-truncated; other
    damage raises."""
    engine.execute("FLUSHALL")           # a second attempt starts from nothing
    total = sum(os.path.getsize(p) for p, _ in target.files)
    with progress_bar(total, "loading", show) as bar:
        for path, kind in target.files:
            if is_snapshot_file(path, kind):
                load_snapshot(engine, path)
            else:
                with loading(engine):
                    try:
                        replay_file(engine, path)
                    except TruncatedFileError as exc:
                        if not tail_cut(target, exc):
                            raise
                        warn_dropped(exc)
            bar.update(os.path.getsize(path))


def warn_dropped(cut: TruncatedFileError) -> None:
    dropped = os.path.getsize(cut.path) - cut.offset
    print(f"warning: {cut.path} ends inside a command ({cut.reason}): its last {dropped} "
          f"bytes, from offset {cut.offset}, were left out, as the server does when it "
          "loads it (aof-load-truncated yes); the file was not changed", file=sys.stderr)


def cmd_replay(args) -> int:
    if args.to_dir:
        return replay_to_dir(args)
    target, opened = read_steady(args.path, lambda t: (t, open_all(t)))
    try:
        return replay_to_server(target, opened, args)
    finally:
        for fh in opened:
            fh.close()


def open_all(target: Target) -> list:
    """Every file opened at once (a rewrite deleting them later does not take them
    from this reader); OSError if one is gone already."""
    opened: list = []
    try:
        for path, _ in target.files:
            opened.append(open(path, "rb"))
    except OSError:
        for fh in opened:
            fh.close()
        raise
    return opened


def replay_to_dir(args) -> int:
    """Writes a new data directory (AOF with a fresh base) holding the AOF's state,
    owning it (locked) from the first check to the last write. A directory it
    created is removed again when the AOF cannot be loaded."""
    from engine import Engine
    created = not os.path.exists(args.to_dir)
    engine = Engine(dir=args.to_dir, save=[])       # no save point fires while loading
    durability = engine.durability
    code = EXIT_OK
    try:
        taken = [p for p in (os.path.join(durability.dir, durability.appenddirname),
                             durability.snapshot_path) if os.path.exists(p)]
        if taken:
            print(f"{args.to_dir} already holds {os.path.basename(taken[0])}",
                  file=sys.stderr)
            return EXIT_USAGE
        try:
            read_steady(args.path, lambda target: load_into(engine, target, args.progress))
        except CorruptFileError as exc:
            code = report_damage(locate(args.path), exc)
            return code
        durability.set_appendonly(True)
    finally:
        engine.close(save=False)
        if code != EXIT_OK and created:
            os.unlink(durability.dir_lock.path)
            os.rmdir(durability.dir)
    print(f"Wrote {args.to_dir}/{durability.appenddirname}")
    return EXIT_OK


def replay_to_server(target: Target, opened: list, args) -> int:
    """Sends every command of the opened files to a running server, pipelined in
    batches."""
    import redis
    snapshots = [p for p, kind in target.files if is_snapshot_file(p, kind)]
    if snapshots:
        print(f"{snapshots[0]}: a snapshot base cannot be sent over RESP; use --to-dir or "
              "rewrite with --resp first", file=sys.stderr)
        return EXIT_USAGE
    host, _, port = args.to_server.rpartition(":")
    conn = redis.Connection(host=host or "127.0.0.1", port=int(port), password=args.password)
    conn.connect()
    total = sum(os.fstat(fh.fileno()).st_size for fh in opened)
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
        for (path, _), fh in zip(target.files, opened):
            try:
                for argv in commands_of(path, bar, fh):
                    batch.append_command(argv)
                    pending += 1
                    sent += 1
                    if pending >= 1000:
                        errors += send()
            except TruncatedFileError as exc:
                if not tail_cut(target, exc):
                    return report_damage(target, exc)
                warn_dropped(exc)
            except CorruptFileError as exc:
                return report_damage(target, exc)
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
    filename = os.path.basename(target.manifest_path)[:-len(".manifest")]
    engine = Engine(dir=data_dir, appendonly=True, appendfsync="no", appenddirname=dirname,
                    appendfilename=filename, aof_use_rdb_preamble=not args.resp)
    before = sum(os.path.getsize(p) for p, _ in target.files)
    engine.execute("BGREWRITEAOF")
    engine.close(save=False)
    after = sum(os.path.getsize(p) for p, _ in locate(target.aof_dir).files)
    print(f"Rewrote {target.aof_dir}: {before} -> {after} bytes")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sluice-aof", description=__doc__.split("\n")[0],
                                epilog=PATH_HELP,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="action", required=True)

    def action(name: str, func, help_text: str) -> argparse.ArgumentParser:
        a = sub.add_parser(name, help=help_text, description=help_text, epilog=PATH_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        a.add_argument("path", metavar="PATH", help="what to work on (see below)")
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
    except DirectoryInUse as exc:
        print(f"sluice-aof: {exc}: stop it first (nothing was changed)", file=sys.stderr)
        return EXIT_IN_USE
    except (PersistError, OSError) as exc:
        print(f"sluice-aof: {exc}", file=sys.stderr)
        return EXIT_DAMAGED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
