"""Server statistics and the INFO command.

`Stats` holds the counters INFO reports (CONFIG RESETSTAT zeroes them); `render_info`
builds INFO's text. Only what is true is reported: the persistence section comes
from the engine's persistence (persist/durability.py). latencystats gives each
command's latency percentiles (50, 99, 99.9: Redis's
`latency-tracking-info-percentiles` default) from an HdrHistogram-like histogram
(engine/api/command_stats.pyx CommandStat). Not reported
(yet): keyspace_hits/keyspace_misses (the engine does not count lookups), the
allocator's fragmentation figures (Sluice does not use jemalloc).
"""
from __future__ import annotations

import os
import platform
import resource
import sys
import time
from typing import TYPE_CHECKING, Optional

from engine.api.command_stats import CommandStats
from engine.api.session import SERVER_VERSION
from engine.commands.memory_report import cache_bytes, index_overhead

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.server import Server

OPS_SAMPLES = 16
LRU_CLOCK_MAX = (1 << 24) - 1
TITLES = {"cpu": "CPU"}                      # a section whose title is not capitalized
LATENCY_PERCENTILES = (50.0, 99.0, 99.9)     # Redis's latency-tracking-info-percentiles


class Stats(CommandStats):
    """INFO stats counters, the per-command ones (CommandStats) among them."""

    def __init__(self) -> None:
        super().__init__()
        self.latency_percentiles = LATENCY_PERCENTILES
        self.reset()

    def reset(self) -> None:
        self.reset_commands()
        self.errors: dict[str, int] = {}
        self.error_replies = 0
        self.total_connections = 0
        self.rejected_connections = 0
        self.total_commands = 0
        self.net_input = 0
        self.net_output = 0
        self.expired_keys = 0
        self.reads = 0
        self.writes = 0
        self.max_input_buffer = 0           # peak query buffer, this window
        self._previous_max_input = 0        # and the previous one
        self._peak_rolls = 0
        self._ops_samples = [0] * OPS_SAMPLES
        self._ops_index = 0
        self._ops_last_time = time.monotonic()
        self._ops_last_count = self.total_commands

    def error(self, text: str) -> None:
        self.error_replies += 1
        code = text.split(" ", 1)[0]
        if len(self.errors) < 128 or code in self.errors:
            self.errors[code] = self.errors.get(code, 0) + 1

    def roll_peaks(self) -> None:
        """Called every second: the 'recent' peaks cover the last 4 to 8 seconds."""
        self._peak_rolls += 1
        if self._peak_rolls >= 4:
            self._peak_rolls = 0
            self._previous_max_input = self.max_input_buffer
            self.max_input_buffer = 0

    def recent_max_input_buffer(self) -> int:
        return max(self.max_input_buffer, self._previous_max_input)

    def sample_ops(self) -> None:
        """Called by the cron (every 100 ms at hz 10): one sample of commands/s; the
        instantaneous rate is the mean of the last 16 samples, as in Redis."""
        now = time.monotonic()
        elapsed = now - self._ops_last_time
        if elapsed < 0.09:
            return
        ops = int((self.total_commands - self._ops_last_count) / elapsed)
        self._ops_samples[self._ops_index] = ops
        self._ops_index = (self._ops_index + 1) % OPS_SAMPLES
        self._ops_last_time = now
        self._ops_last_count = self.total_commands

    def ops_per_sec(self) -> int:
        return sum(self._ops_samples) // OPS_SAMPLES


def human_bytes(n: int) -> str:
    """Redis's bytesToHuman."""
    if n < 1024:
        return f"{n}B"
    for unit, size in (("K", 1024), ("M", 1024 ** 2), ("G", 1024 ** 3), ("T", 1024 ** 4),
                       ("P", 1024 ** 5)):
        if n < size * 1024 or unit == "P":
            return f"{n / size:.2f}{unit}"
    return f"{n}B"


def _rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


DEFAULT_SECTIONS = ("server", "clients", "memory", "persistence", "stats", "replication",
                    "cpu", "modules", "errorstats", "cluster", "keyspace")
ALL_SECTIONS = ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace")


def wanted_sections(args: list) -> list:
    """Sections named by INFO's arguments, in Redis's order (default, all, everything
    or section names; unknown names are ignored)."""
    if not args:
        return list(DEFAULT_SECTIONS)
    names = set()
    for arg in args:
        a = arg.decode("utf-8", "replace").lower()
        if a == "default":
            names.update(DEFAULT_SECTIONS)
        elif a in ("all", "everything"):
            names.update(ALL_SECTIONS)
        else:
            names.add(a)
    return [s for s in ALL_SECTIONS if s in names]


def render_info(server: "Server", args: list) -> bytes:
    out = []
    for section in wanted_sections(args):
        lines = SECTIONS[section](server)
        title = TITLES.get(section) or section.capitalize()
        out.append("# " + title + "\r\n" + "".join(f"{k}:{v}\r\n" for k, v in lines))
    return "\r\n".join(out).encode()


def _server(s: "Server") -> list:
    now = time.time()
    uptime = int(now - s.start_time)
    uname = platform.uname()
    ports = s.tcp_port()
    return [
        ("redis_version", SERVER_VERSION.decode()),
        ("sluice_version", s.version),
        ("redis_git_sha1", "00000000"),
        ("redis_git_dirty", 0),
        ("redis_mode", "standalone"),
        ("os", f"{uname.system} {uname.release} {uname.machine}"),
        ("arch_bits", 64 if sys.maxsize > 2 ** 32 else 32),
        ("monotonic_clock", "POSIX clock_gettime"),     # Python's time.monotonic
        ("multiplexing_api", s.loop_name),
        ("python_version", platform.python_version()),
        ("process_id", os.getpid()),
        ("process_supervised", "no"),
        ("run_id", s.run_id),
        ("tcp_port", ports),
        ("server_time_usec", int(now * 1_000_000)),
        ("uptime_in_seconds", uptime),
        ("uptime_in_days", uptime // 86400),
        ("hz", s.cfg.hz),
        ("configured_hz", s.cfg.hz),
        ("lru_clock", int(now) & LRU_CLOCK_MAX),      # Redis's LRU clock: seconds, 24 bits
        ("executable", s.executable),
        ("config_file", s.cfg.config_file or ""),
        ("io_threads_active", 0),
    ]


def _clients(s: "Server") -> list:
    pubsub_clients = sum(1 for c in s.clients.values() if c.session.subscriptions)
    return [
        ("connected_clients", len(s.clients)),
        ("cluster_connections", 0),
        ("maxclients", s.cfg.maxclients),
        ("client_recent_max_input_buffer", s.stats.recent_max_input_buffer()),
        ("client_recent_max_output_buffer", s.max_output_buffer()),
        ("blocked_clients", s.hub.blocked_clients.count),
        ("tracking_clients", 0),
        ("pubsub_clients", pubsub_clients),
        ("clients_in_timeout_table", s.hub.blocked_clients.with_timeout),
        # Redis 7.2+: keys with blocked clients, and those of them a client waits on
        # to be deleted too (a blocked XREADGROUP is woken when its key goes away)
        ("total_blocking_keys", len(s.hub.blocked)),
        ("total_blocking_keys_on_nokey",
         sum(1 for readers in s.hub.blocked.values() if any(br.is_group for br in readers))),
    ]


def _memory(s: "Server") -> list:
    """Redis 7.0's INFO memory fields, in its order, for those Sluice has: used_memory is
    the stored data's cost (keys, values, their containers); the keyspace index's C
    tables are its overhead, the rest its dataset."""
    used = s.engine.used_memory()
    overhead = index_overhead(s.engine.databases)
    peak = s.engine.peak_memory
    rss = _rss()
    maxmemory = s.cfg.maxmemory
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return [
        ("used_memory", used),
        ("used_memory_human", human_bytes(used)),
        ("used_memory_rss", rss),
        ("used_memory_rss_human", human_bytes(rss)),
        ("used_memory_peak", peak),
        ("used_memory_peak_human", human_bytes(peak)),
        ("used_memory_peak_perc", "%.2f%%" % (100 * used / peak if peak else 0)),
        ("used_memory_overhead", overhead),
        ("used_memory_startup", 0),
        ("used_memory_dataset", used - overhead),
        ("used_memory_dataset_perc", "%.2f%%" % (100 * (used - overhead) / used if used else 0)),
        ("total_system_memory", total),
        ("total_system_memory_human", human_bytes(total)),
        *_script_memory(s),
        ("maxmemory", maxmemory),
        ("maxmemory_human", human_bytes(maxmemory)),
        ("maxmemory_policy", s.cfg.maxmemory_policy),
        ("mem_fragmentation_ratio", "%.2f" % (rss / used if used else 0)),
        ("mem_fragmentation_bytes", rss - used),
        ("mem_not_counted_for_evict", 0),
        # no replica, no cluster link, no AOF buffer between writes (the log is written
        # when the event-loop turn ends)
        ("mem_replication_backlog", 0),
        ("mem_total_replication_buffers", 0),
        ("mem_clients_slaves", 0),
        ("mem_cluster_links", 0),
        ("mem_aof_buffer", 0),
        ("mem_allocator", "libc"),
        ("active_defrag_running", 0),
        ("lazyfree_pending_objects", 0),
        ("lazyfreed_objects", 0),
    ]


def _persistence(s: "Server") -> list:
    fields = [("loading", 0), ("async_loading", 0)]
    no_modules = [("module_fork_in_progress", 0), ("module_fork_last_cow_size", 0)]
    if s.durability is None:
        return fields + [("rdb_changes_since_last_save", s.engine.dirty), ("rdb_bgsave_in_progress", 0),
                         ("rdb_saves", 0), ("aof_enabled", 0), ("aof_rewrite_in_progress", 0),
                         ("aof_rewrite_scheduled", 0), ("aof_rewrites", 0)] + no_modules
    return fields + list(s.durability.info().items()) + no_modules


def _stats(s: "Server") -> list:
    st = s.stats
    return [
        ("total_connections_received", st.total_connections),
        ("total_commands_processed", st.total_commands),
        ("instantaneous_ops_per_sec", st.ops_per_sec()),
        ("total_net_input_bytes", st.net_input),
        ("total_net_output_bytes", st.net_output),
        ("total_net_repl_input_bytes", 0),          # no replication
        ("total_net_repl_output_bytes", 0),
        ("instantaneous_input_repl_kbps", "0.00"),
        ("instantaneous_output_repl_kbps", "0.00"),
        ("rejected_connections", st.rejected_connections),
        ("sync_full", 0),
        ("sync_partial_ok", 0),
        ("sync_partial_err", 0),
        ("expired_keys", st.expired_keys),
        ("evicted_keys", s.engine.evicted_keys),
        ("evicted_clients", 0),                     # no maxmemory-clients
        ("pubsub_channels", s.pubsub.channel_count()),
        ("pubsub_patterns", s.pubsub.pattern_count()),
        ("pubsubshard_channels", len(s.pubsub.shard_channels)),
        ("total_forks", 0),
        ("migrate_cached_sockets", 0),              # no MIGRATE
        ("slave_expires_tracked_keys", 0),
        ("active_defrag_hits", 0),                  # no active defragmentation
        ("active_defrag_misses", 0),
        ("active_defrag_key_hits", 0),
        ("active_defrag_key_misses", 0),
        ("total_active_defrag_time", 0),
        ("current_active_defrag_time", 0),
        ("tracking_total_keys", 0),                 # no CLIENT TRACKING
        ("tracking_total_items", 0),
        ("tracking_total_prefixes", 0),
        ("unexpected_error_replies", 0),            # (errors from a master or an AOF)
        ("total_error_replies", st.error_replies),
        ("total_reads_processed", st.reads),
        ("total_writes_processed", st.writes),
        ("io_threaded_reads_processed", 0),         # no I/O threads
        ("io_threaded_writes_processed", 0),
        # (Redis 7.2's, at the end of the section)
        ("acl_access_denied_auth", s.hub.acl.denied["auth"]),
        ("acl_access_denied_cmd", s.hub.acl.denied["cmd"]),
        ("acl_access_denied_key", s.hub.acl.denied["key"]),
        ("acl_access_denied_channel", s.hub.acl.denied["channel"]),
    ]


def _replication(s: "Server") -> list:
    return [
        ("role", "master"),
        ("connected_slaves", 0),
        ("master_failover_state", "no-failover"),
        ("master_replid", s.run_id),
        ("master_replid2", "0" * 40),
        ("master_repl_offset", 0),
        ("second_repl_offset", -1),
        ("repl_backlog_active", 0),
        ("repl_backlog_size", 1048576),             # repl-backlog-size's default, unused
        ("repl_backlog_first_byte_offset", 0),
        ("repl_backlog_histlen", 0),
    ]


def _cpu(s: "Server") -> list:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    main = resource.getrusage(resource.RUSAGE_THREAD)     # INFO runs on the event loop's
    return [
        ("used_cpu_sys", f"{me.ru_stime:.6f}"),
        ("used_cpu_user", f"{me.ru_utime:.6f}"),
        ("used_cpu_sys_children", f"{kids.ru_stime:.6f}"),
        ("used_cpu_user_children", f"{kids.ru_utime:.6f}"),
        ("used_cpu_sys_main_thread", f"{main.ru_stime:.6f}"),
        ("used_cpu_user_main_thread", f"{main.ru_utime:.6f}"),
    ]


def _script_memory(s: "Server") -> list:
    """Redis 7.0's scripts fields: the Lua heaps of EVAL's and FUNCTION's interpreters
    (vm_*, 0 before the first script or library makes one), what their caches hold
    beside (scripts_eval, functions: MEMORY STATS lua.caches and functions.caches), and
    how many scripts, functions and libraries there are."""
    scripting = s.engine.scripting
    functions = s.engine.functions
    vm_eval = 0 if scripting is None else scripting.vm_bytes()
    vm_functions = 0 if functions is None else functions.runner.vm_bytes()
    scripts_eval, functions_cache = cache_bytes(scripting), cache_bytes(functions)
    return [
        ("used_memory_lua", vm_eval),
        ("used_memory_vm_eval", vm_eval),
        ("used_memory_lua_human", human_bytes(vm_eval)),
        ("used_memory_scripts_eval", scripts_eval),
        ("number_of_cached_scripts", 0 if scripting is None else len(scripting.scripts)),
        ("number_of_functions", 0 if functions is None else len(functions.functions)),
        ("number_of_libraries", 0 if functions is None else len(functions.libraries)),
        ("used_memory_vm_functions", vm_functions),
        ("used_memory_vm_total", vm_eval + vm_functions),
        ("used_memory_vm_total_human", human_bytes(vm_eval + vm_functions)),
        ("used_memory_functions", functions_cache),
        ("used_memory_scripts", scripts_eval + functions_cache),
        ("used_memory_scripts_human", human_bytes(scripts_eval + functions_cache)),
    ]


def _modules(s: "Server") -> list:
    return []


def _commandstats(s: "Server") -> list:
    out = []
    for name, st in s.stats.commands.items():
        if st.calls or st.rejected or st.failed:
            usec = st.ns // 1000
            per_call = st.ns / 1000 / st.calls if st.calls else 0.0
            out.append((f"cmdstat_{name}",
                        f"calls={st.calls},usec={usec},usec_per_call={per_call:.2f},"
                        f"rejected_calls={st.rejected},failed_calls={st.failed}"))
    return out


def _errorstats(s: "Server") -> list:
    return [(f"errorstat_{code}", f"count={n}") for code, n in s.stats.errors.items()]


def _percentile_name(p: float) -> str:
    """50.0 -> "50", 99.9 -> "99.9" (Redis's trimmed %f)."""
    return ("%f" % p).rstrip("0").rstrip(".")


def _latencystats(s: "Server") -> list:
    percentiles = s.stats.latency_percentiles
    out = []
    for name, st in s.stats.commands.items():
        if st.samples:
            out.append((f"latency_percentiles_usec_{name}",
                        ",".join("p%s=%.3f" % (_percentile_name(p),
                                               st.latency_percentile(p) / 1000.0)
                                 for p in percentiles)))
    return out


def _cluster(s: "Server") -> list:
    return [("cluster_enabled", 0)]


def _keyspace(s: "Server") -> list:
    out = []
    now_ms = s.engine.clock.now_ms()
    for db in s.engine.databases:
        keys = len(db)
        if not keys:
            continue
        out.append((f"db{db.index}", f"keys={keys},expires={db.volatile_count()},"
                                     f"avg_ttl={_avg_ttl(db.expiries(10000), now_ms)}"))
    return out


def _avg_ttl(expiries: list, now_ms: int) -> int:
    """Average remaining TTL in ms over a sample of expiries (Redis estimates it too)."""
    left = [when - now_ms for when in expiries if when > now_ms]
    return sum(left) // len(left) if left else 0


SECTIONS = {
    "server": _server, "clients": _clients, "memory": _memory, "persistence": _persistence,
    "stats": _stats, "replication": _replication, "cpu": _cpu, "modules": _modules,
    "commandstats": _commandstats, "errorstats": _errorstats,
    "latencystats": _latencystats, "cluster": _cluster,
    "keyspace": _keyspace,
}


def parse_info(text: bytes) -> dict:
    """INFO text as {field: value} (for tests and tools)."""
    out: dict = {}
    for line in text.decode().splitlines():
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out

