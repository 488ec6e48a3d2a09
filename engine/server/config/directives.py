"""The directive table: every configuration directive Sluice knows, with its kind, default,
documentation and CONFIG SET rules (mutable, protected, refused while loading, secret).  One
place to read which directives exist; anything not listed is "Bad directive" at start-up and
"Unknown option" for CONFIG SET.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from engine.server.config.kinds import (Bind, Bool, ClientOutputBufferLimit, Dir, Enum, Int, Kind,
                                        Notify, Save, String, pathless)
from engine.server.config.value_parsing import INT_MAX, LLONG_MAX, UINT_MAX, ULLONG_MAX, as_str
from engine.server.config.version import PROGRAM_NAME
from persist import SNAPSHOT_FILENAME

CONFIG_MIN_HZ, CONFIG_MAX_HZ = 1, 500


@dataclass(frozen=True)
class Directive:
    """One configuration directive.

    mutable       CONFIG SET may change it (else "can't set immutable config")
    protected     CONFIG SET only when enable-protected-configs allows it (dir, dbfilename)
    deny_loading  CONFIG SET refused with -LOADING while the dataset loads
    sensitive     the value is a secret: redact it in MONITOR/SLOWLOG/logs
    volatile      CONFIG SET to the same value still runs its listeners (the file it
                  names may have changed: a certificate is reloaded)
    check         extra validation after parsing: value -> error text or None
    default       the value, or a zero-argument callable computing it (dir: the cwd)
    """

    name: str
    kind: Kind
    default: Any
    doc: str
    mutable: bool = True
    protected: bool = False
    deny_loading: bool = False
    sensitive: bool = False
    volatile: bool = False
    aliases: tuple[str, ...] = ()
    check: Optional[Callable[[Any], Optional[str]]] = None


def _only_no_daemonize(value: bool) -> Optional[str]:
    if value:
        return (f"daemonize yes is not supported: {PROGRAM_NAME} always runs in the foreground; "
                "use a process supervisor (systemd, docker, nohup) to run it in the background")
    return None


MB = 1024 * 1024

DIRECTIVES: tuple[Directive, ...] = (
    # --- network ---
    Directive("port", Int(0, 65535), 6379, "TCP port to accept connections on; 0 disables TCP."),
    Directive("bind", Bind(), ["127.0.0.1", "-::1"],
              "Addresses to listen on (up to 16); a '-' prefix marks an address that may be "
              "unavailable; \"\" listens on none."),
    Directive("protected-mode", Bool(), True,
              "Refuse non-loopback clients while no password is set and bind is the default."),
    Directive("unixsocket", String(empty_is_null=True), "",
              "Path of a Unix socket to listen on too; empty: none.", mutable=False),
    Directive("unixsocketperm", Int(0, 0o777, unsigned=True, octal=True), 0,
              "Permissions (octal) of the Unix socket; 0 keeps the umask's.", mutable=False),
    Directive("timeout", Int(0, INT_MAX), 0, "Close a client idle this many seconds; 0 = never."),
    Directive("tcp-keepalive", Int(0, INT_MAX), 300,
              "SO_KEEPALIVE interval in seconds for client sockets; 0 disables."),
    Directive("maxclients", Int(1, UINT_MAX, unsigned=True), 10000,
              "Maximum number of connected clients."),
    Directive("requirepass", String(empty_is_null=True, c_string=False), "",
              "Password clients must AUTH with; empty: no password.", sensitive=True),
    # --- TLS (engine/server/tls.py); a change of any of them reloads the files ---
    Directive("tls-port", Int(0, 65535), 0,
              "TCP port to accept TLS connections on (beside `port`); 0: none."),
    *(Directive(name, String(empty_is_null=True), "", doc, volatile=True) for name, doc in (
        ("tls-cert-file", "The server's certificate (PEM), its chain after it."),
        ("tls-key-file", "The private key of tls-cert-file (PEM)."),
        ("tls-client-cert-file", "Accepted as Redis has it (a certificate for outgoing "
                                 "connections); Sluice makes none."),
        ("tls-client-key-file", "The key of tls-client-cert-file; unused."),
        ("tls-dh-params-file", "Diffie-Hellman parameters (PEM) for DHE ciphers."),
        ("tls-ca-cert-file", "CA certificates (PEM) that sign the clients' certificates."),
        ("tls-ca-cert-dir", "A directory of CA certificates (c_rehash'ed)."),
        ("tls-protocols", "Versions allowed, among TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; empty: "
                          "TLSv1.2 and TLSv1.3."),
        ("tls-ciphers", "OpenSSL's cipher list for TLS 1.2 and older."),
        ("tls-ciphersuites", "OpenSSL's ciphersuites for TLS 1.3."))),
    *(Directive(name, String(empty_is_null=True), "", doc, volatile=True, sensitive=True)
      for name, doc in (("tls-key-file-pass", "Passphrase of an encrypted tls-key-file."),
                        ("tls-client-key-file-pass", "Passphrase of tls-client-key-file."))),
    Directive("tls-auth-clients", Enum("no", "yes", "optional"), "yes",
              "Whether a TLS client must present a certificate signed by the CAs (optional: "
              "verified when given).", volatile=True),
    Directive("tls-prefer-server-ciphers", Bool(), False,
              "Choose the cipher by the server's order rather than the client's.",
              volatile=True),
    Directive("tls-session-caching", Bool(), True,
              "Let TLS clients resume their sessions.", volatile=True),
    Directive("tls-session-cache-size", Int(0, INT_MAX), 20480,
              "Sessions the TLS session cache keeps.", volatile=True),
    Directive("tls-session-cache-timeout", Int(0, INT_MAX), 300,
              "Seconds a cached TLS session may be resumed.", volatile=True),
    Directive("aclfile", String(), "", "File of the ACL users (ACL LOAD, ACL SAVE); empty: "
              "users come from `user` lines of the configuration file.", mutable=False),
    Directive("acllog-max-len", Int(0, LLONG_MAX), 128, "Entries ACL LOG keeps."),
    Directive("acl-pubsub-default", Enum("allchannels", "resetchannels"), "resetchannels",
              "The channels a new ACL user may use: all, or none until granted."),
    # --- limits ---
    Directive("proto-max-bulk-len", Int(MB, LLONG_MAX, memory=True), 512 * MB,
              "Largest bulk string a client may send."),
    Directive("client-query-buffer-limit", Int(MB, LLONG_MAX, unsigned=True, memory=True),
              1024 * MB, "Largest query buffer of one client."),
    Directive("client-output-buffer-limit", ClientOutputBufferLimit(),
              {"normal": (0, 0, 0), "replica": (256 * MB, 64 * MB, 60),
               "pubsub": (32 * MB, 8 * MB, 60)},
              "Output buffer limits per client class: <class> <hard> <soft> <soft-seconds>."),
    Directive("busy-reply-threshold", Int(0, LLONG_MAX), 5000,
              "Milliseconds a script runs before other clients are served again, with BUSY "
              "errors until it ends (SCRIPT KILL and SHUTDOWN NOSAVE work then).",
              aliases=("lua-time-limit",)),
    Directive("slowlog-log-slower-than", Int(-1, LLONG_MAX), 10000,
              "Microseconds a command runs to enter the slow log (SLOWLOG); 0 logs every "
              "command, a negative value none."),
    Directive("slowlog-max-len", Int(0, LLONG_MAX), 128,
              "Entries the slow log keeps (the oldest go first)."),
    Directive("latency-monitor-threshold", Int(0, LLONG_MAX), 0,
              "Milliseconds a command runs to be sampled by the latency monitor (LATENCY); "
              "0: off."),
    Directive("maxmemory", Int(0, ULLONG_MAX, unsigned=True, memory=True), 0,
              "Limit of used_memory: above it keys are evicted by maxmemory-policy, and "
              "commands that may grow memory are refused (OOM) when none can be; 0: no limit."),
    Directive("maxmemory-policy",
              Enum("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                   "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
              "noeviction",
              "Which keys maxmemory evicts (noeviction: none, writes are refused)."),
    Directive("maxmemory-samples", Int(1, INT_MAX), 5,
              "Keys sampled per database and round of eviction (more: closer to true LRU/LFU)."),
    Directive("maxmemory-eviction-tenacity", Int(0, 100), 10,
              "How long one round of eviction may run before the command goes on (100: "
              "until within the limit)."),
    Directive("lfu-log-factor", Int(0, INT_MAX), 10,
              "How many accesses it takes to raise a key's LFU counter (logarithmic)."),
    Directive("lfu-decay-time", Int(0, INT_MAX), 1,
              "Minutes after which an idle key's LFU counter drops by one; 0: never."),
    # --- collection encodings (the engine's EncodingLimits) ---
    Directive("hash-max-listpack-entries", Int(0, LLONG_MAX), 512,
              "Fields a hash keeps in a listpack before it becomes a hash table.",
              aliases=("hash-max-ziplist-entries",)),
    Directive("hash-max-listpack-value", Int(0, LLONG_MAX, memory=True), 64,
              "Longest field or value (bytes) a listpack-encoded hash takes.",
              aliases=("hash-max-ziplist-value",)),
    Directive("set-max-intset-entries", Int(0, LLONG_MAX), 512,
              "Members a set of integers keeps in an intset before it becomes a hash table."),
    Directive("set-max-listpack-entries", Int(0, LLONG_MAX), 128,
              "Members a set keeps in a listpack before it becomes a hash table."),
    Directive("set-max-listpack-value", Int(0, LLONG_MAX, memory=True), 64,
              "Longest member (bytes) a listpack-encoded set takes."),
    Directive("zset-max-listpack-entries", Int(0, LLONG_MAX), 128,
              "Members a sorted set keeps in a listpack before it becomes a skiplist.",
              aliases=("zset-max-ziplist-entries",)),
    Directive("zset-max-listpack-value", Int(0, LLONG_MAX, memory=True), 64,
              "Longest member (bytes) a listpack-encoded sorted set takes.",
              aliases=("zset-max-ziplist-value",)),
    Directive("list-max-listpack-size", Int(-INT_MAX - 1, INT_MAX), -2,
              "Bound of a list's listpack node: -1..-5 = 4, 8, 16, 32, 64 KB; a positive n = "
              "n entries (and at most 8 KB). A list of one such node is a listpack.",
              aliases=("list-max-ziplist-size",)),
    Directive("list-compress-depth", Int(0, INT_MAX), 0,
              "Nodes at each end of a list left uncompressed; the ones between are "
              "LZF-compressed. 0: none compressed."),
    # --- streams ---
    Directive("stream-node-max-entries", Int(0, LLONG_MAX), 100,
              "Entries per stream node before a new node starts; 0 = no limit."),
    Directive("stream-node-max-bytes", Int(0, LLONG_MAX, unsigned=True, memory=True), 4096,
              "Bytes per stream node before a new node starts; 0 = no limit."),
    Directive("stream-idmp-duration", Int(1, 86400), 100,
              "Seconds a stream keeps an XADD IDMP idempotent ID (its default IDMP-DURATION; "
              "XCFGSET sets it per stream)."),
    Directive("stream-idmp-maxsize", Int(1, 10000), 100,
              "Idempotent IDs a stream keeps per producer (its default IDMP-MAXSIZE; XCFGSET "
              "sets it per stream)."),
    Directive("notify-keyspace-events", Notify(), 0,
              "Keyspace notification classes: K E g $ l s h z x e t m n d, A = g$lshzxetd."),
    Directive("databases", Int(1, INT_MAX), 16, "Number of databases (SELECT 0..n-1).",
              mutable=False),
    # --- persistence ---
    Directive("dir", Dir(), lambda: as_str(os.fsencode(os.getcwd())),
              "Working directory: where the AOF directory and the snapshot file live.",
              protected=True, deny_loading=True),
    Directive("dbfilename", String(check=pathless("dbfilename", "filename", True)),
              SNAPSHOT_FILENAME,
              "Snapshot file name inside dir; the file is in Sluice's own format (not "
              "RDB) whatever its name.", protected=True),
    Directive("save", Save(), [(3600, 1), (300, 100), (60, 10000)],
              "Snapshot after <seconds> if at least <changes> writes; \"\" disables."),
    Directive("stop-writes-on-bgsave-error", Bool(), True,
              "Refuse write commands while the last background save failed (when save "
              "points are set), until a save succeeds."),
    Directive("appendonly", Bool(), False, "Log every write to the append-only file.",
              deny_loading=True),
    Directive("appendfilename",
              String(check=pathless("appendfilename", "filename", False)), "appendonly.aof",
              "Base name of the append-only files.", mutable=False),
    Directive("appenddirname",
              String(check=pathless("appenddirname", "dirname", False)), "appendonlydir",
              "Directory (inside dir) holding the append-only files.", mutable=False),
    Directive("appendfsync", Enum("everysec", "always", "no"), "everysec",
              "When the append-only file is fsynced: always, everysec or no (leave it to the OS)."),
    Directive("auto-aof-rewrite-percentage", Int(0, INT_MAX), 100,
              "Rewrite the AOF when it grew this many percent since the last rewrite; 0 = never."),
    Directive("auto-aof-rewrite-min-size", Int(0, LLONG_MAX, memory=True), 64 * MB,
              "Smallest AOF size that triggers an automatic rewrite."),
    Directive("aof-use-rdb-preamble", Bool(), True,
              "Start a rewritten AOF with a snapshot of the data set."),
    Directive("aof-load-truncated", Bool(), True,
              "Load an AOF whose last command is truncated (else refuse to start)."),
    Directive("sanitize-dump-payload", Enum("no", "yes", "clients"), "no",
              "How deeply RESTORE checks a payload (no, yes, clients). Sluice checks every "
              "payload in full whatever the value, as Redis does under yes: nothing that "
              "could not be saved and loaded back is ever accepted."),
    # --- process ---
    Directive("loglevel", Enum("debug", "verbose", "notice", "warning", "nothing"), "notice",
              "Log verbosity: debug, verbose, notice, warning or nothing."),
    Directive("logfile", String(), "", "Log file; empty: standard output.", mutable=False),
    Directive("pidfile", String(empty_is_null=True), "",
              "Write the process id to this file; empty: none.", mutable=False),
    Directive("daemonize", Bool(), False,
              f"Only 'no': {PROGRAM_NAME} always runs in the foreground.", mutable=False,
              check=_only_no_daemonize),
    Directive("hz", Int(0, INT_MAX, clamp=(CONFIG_MIN_HZ, CONFIG_MAX_HZ)), 10,
              "Background tasks per second (expiry, timeouts); kept within 1..500."),
    Directive("enable-protected-configs", Enum("no", "yes", "local"), "no",
              "Whether CONFIG SET may change dir and dbfilename: no, yes, or local (loopback "
              "clients only).", mutable=False),
)

