"""DUMP, RESTORE and OBJECT.

DUMP replies with the value in Redis's payload format (engine/formats/rdb_value.pyx),
stamped with the RDB version of Redis 7.4 - 8.x (12; streams as type 21). RESTORE
reads payloads of RDB versions up to 12 (strings, and streams of types 15, 19 and 21),
so what redis-server 5.0 - 8.x dumps loads here; Redis 7.0 refuses version 12 (see
DUMP_RDB_VERSION in rdb_value.pyx for the way back).

Effects: RESTORE is logged as given, except that a relative TTL becomes the absolute
time with ABSTTL appended (as Redis propagates it); a RESTORE REPLACE whose TTL is
already past deletes the old key and is logged as DEL; one that changes nothing is
not logged.

OBJECT looks keys up without touching their access time. IDLETIME is the time since
the key's last lookup or store (Database.access_of; 0 for a key not looked up since a
snapshot loaded it); FREQ needs an LFU maxmemory policy,
which Sluice's engine never runs with, so it replies Redis's error for that case.
"""
from libc.stdint cimport int64_t, uint64_t

from engine.core.keyspace cimport Database, ENCODED_AS_STORED, ENCODED_AS_RAW, ENCODED_AS_TEXT
from engine.commands.strings cimport shared_integer
from engine.core.stream cimport Stream
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.commands.table import command
from engine.formats.dump_payload import PayloadError, check
from engine.formats.rdb_value import dump_value, load_value, NEWEST_RDB_VERSION
from engine.core.errors import ResponseError, SYNTAX
from engine.resp.numbers cimport string2ll
from engine.resp.reply import OK

BUSYKEY = "BUSYKEY Target key name already exists."
BAD_PAYLOAD = "ERR DUMP payload version or checksum are wrong"
BAD_DATA = "ERR Bad data format"
LFU_NOT_SELECTED = ("ERR An LFU maxmemory policy is not selected, access frequency not "
                    "tracked. Please note that when switching between policies at "
                    "runtime LRU and LFU data will take some time to adjust.")
LFU_SELECTED = ("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note "
                "that when switching between policies at runtime LRU and LFU data will take "
                "some time to adjust.")
# Redis's refcount of its shared integer objects (0..9999, OBJ_SHARED_INTEGERS).
cdef int64_t SHARED_REFCOUNT = 2147483647
# The largest value of Redis's LRU clock (24 bits of seconds), where idle times wrap.
cdef int64_t LRU_CLOCK_MAX = (1 << 24) - 1
# Strings of up to 44 bytes are embedded in their object (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
cdef Py_ssize_t EMBSTR_LIMIT = 44


@command("dump")
def dump(CommandContext ctx, list argv):
    value = ctx.db.lookup(argv[1], ctx.now)
    if value is None:
        return None
    return dump_value(value)


@command("restore")
def restore(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef bytes key = argv[1]
    cdef bint replace = False, absttl = False
    cdef int64_t idle = -1, freq = -1, ttl
    cdef Py_ssize_t j = 4, argc = len(argv)
    while j < argc:
        more = j + 1 < argc
        if is_option(argv[j], b"replace"):
            replace = True
        elif is_option(argv[j], b"absttl"):
            absttl = True
        elif is_option(argv[j], b"idletime") and more and freq == -1:
            idle = parse_int(argv[j + 1], NULL)
            if idle < 0:
                raise ResponseError("ERR Invalid IDLETIME value, must be >= 0")
            j += 1
        elif is_option(argv[j], b"freq") and more and idle == -1:
            freq = parse_int(argv[j + 1], NULL)
            if freq < 0 or freq > 255:
                raise ResponseError("ERR Invalid FREQ value, must be >= 0 and <= 255")
            j += 1
        else:
            raise ResponseError(SYNTAX)
        j += 1
    if not replace and db.lookup(key, ctx.now) is not None:
        raise ResponseError(BUSYKEY)
    ttl = parse_int(argv[2], NULL)
    if ttl < 0:
        raise ResponseError("ERR Invalid TTL value, must be >= 0")
    payload = bytes(argv[3])
    try:
        check(payload, NEWEST_RDB_VERSION)
    except PayloadError:
        raise ResponseError(BAD_PAYLOAD) from None
    try:
        value = load_value(payload, ctx.limits)
    except (PayloadError, MemoryError):
        raise ResponseError(BAD_DATA) from None

    cdef bint deleted = replace and db.lookup(key, ctx.now) is not None and db.remove(key)
    if ttl and not absttl:
        # wraps past INT64_MAX as in Redis, where such a key is then already expired
        ttl = <int64_t>(<uint64_t>ttl + <uint64_t>ctx.now)
    if ttl and ttl <= ctx.now and not db.loading:
        if deleted:
            ctx.touch(key, "g", b"del")
            ctx.propagate([b"DEL", key])
        return OK
    db.store(key, value)
    if ttl:
        db.set_expire(key, ttl)
    if idle >= 0 and not db.lfu:
        # Redis keeps access times on a 24-bit clock of seconds: idle times wrap
        db.set_access(key, value, ctx.now - (idle % LRU_CLOCK_MAX) * 1000)
    elif freq >= 0 and db.lfu:      # the LFU metadata: minute of access, counter
        db.set_access(key, value, (((ctx.now // 60000) & 0xFFFF) << 8) | freq)
    ctx.touch(key, "g", b"restore")
    if ctx.logs():
        effect = list(argv)
        if ttl and not absttl:
            effect[2] = str(ttl).encode()
            effect.append(b"ABSTTL")
        ctx.effects.append(effect)
    return OK


cdef object peek(CommandContext ctx, bytes key):
    """The live value at key without touching its access time, or None."""
    cdef Database db = ctx.db
    value = db.peek(key)
    if value is None:
        return None
    if 0 <= db.expire_at(key) <= ctx.now and not db.loading:
        return db.lookup(key, ctx.now)      # removes it (logged as expired)
    return value


cpdef bytes encoding_of(object value, int mark=ENCODED_AS_STORED):
    """What OBJECT ENCODING says for a value, as Redis 7 would store it (a string as
    the command that made it left it: its keyspace mark)."""
    cdef int64_t v
    if type(value) is bytes:
        if mark == ENCODED_AS_RAW:
            return b"raw"
        if (mark != ENCODED_AS_TEXT and len(<bytes>value) <= 20
                and string2ll(value, len(<bytes>value), &v)):
            return b"int"
        return b"embstr" if len(<bytes>value) <= EMBSTR_LIMIT else b"raw"
    if type(value) is Stream:
        return b"stream"
    return value.encoding()


@command("object|encoding")
def object_encoding(CommandContext ctx, list argv):
    value = peek(ctx, argv[2])
    return None if value is None else encoding_of(value, ctx.db.encoding_mark(argv[2]))


@command("object|refcount")
def object_refcount(CommandContext ctx, list argv):
    value = peek(ctx, argv[2])
    if value is None:
        return None
    if (type(value) is bytes and ctx.db.encoding_mark(argv[2]) == ENCODED_AS_STORED
            and shared_integer(value)):
        return SHARED_REFCOUNT
    return 1


@command("object|idletime")
def object_idletime(CommandContext ctx, list argv):
    cdef bytes key = argv[2]
    value = peek(ctx, key)
    if value is None:
        return None
    if ctx.db.lfu:
        raise ResponseError(LFU_SELECTED)
    cdef int64_t when = ctx.db.access_of(key, value)
    if when <= 0:           # not looked up since it was loaded
        return 0
    return (ctx.now - when) // 1000 if ctx.now > when else 0


@command("object|freq")
def object_freq(CommandContext ctx, list argv):
    cdef bytes key = argv[2]
    value = peek(ctx, key)
    if value is None:
        return None
    if not ctx.db.lfu:
        raise ResponseError(LFU_NOT_SELECTED)
    return ctx.db.frequency(key, value, ctx.now)


OBJECT_HELP = [
    b"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"ENCODING <key>",
    b"    Return the kind of internal representation used in order to store the value",
    b"    associated with a <key>.",
    b"FREQ <key>",
    b"    Return the access frequency index of the <key>. The returned integer is",
    b"    proportional to the logarithm of the recent access frequency of the key.",
    b"IDLETIME <key>",
    b"    Return the idle time of the <key>, that is the approximated number of",
    b"    seconds elapsed since the last access to the key.",
    b"REFCOUNT <key>",
    b"    Return the number of references of the value associated with the specified",
    b"    <key>.",
    b"HELP",
    b"    Prints this help.",
]


@command("object|help")
def object_help(CommandContext ctx, list argv):
    return list(OBJECT_HELP)
