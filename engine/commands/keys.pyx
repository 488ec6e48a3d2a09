"""Generic key commands: DEL, UNLINK, EXISTS, TYPE, RENAME, RENAMENX, KEYS, SCAN,
DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL,
EXPIRETIME, PEXPIRETIME, PERSIST, TOUCH, RANDOMKEY.

Removing or replacing a key drops its value object, so a stream's consumer groups
go with it; RENAME moves the same object (groups included) to the new name.

SCAN's cursor is Redis's: the reverse-binary position of the next bucket of the
keyspace's hash table (Database.scan), 0 when the scan is over. A key present for
the whole scan is returned at least once, whatever is inserted or deleted and
however the table grows or shrinks meanwhile (a key may come twice when it
shrinks); keys added during the scan may or may not be returned.

Effects: DEL/UNLINK log `DEL` with the keys actually removed; the EXPIRE family
logs `PEXPIREAT key <absolute ms>` (options dropped), or `DEL key` when the time
is already past; RENAMENX logs RENAME; SWAPDB logs itself; nothing is logged when
nothing changed.
"""
from libc.stdint cimport int64_t, uint64_t, INT64_MAX, INT32_MIN, INT32_MAX
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.core.keyspace cimport Database
from engine.core.stream cimport Stream
from engine.core.glob cimport stringmatchlen
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, parse_int_range, parse_cursor, is_option, scan_options, SCAN_TYPE
from engine.commands.table import command
from engine.core.value_types import VALUE_TYPES
from engine.core.errors import ResponseError, SYNTAX, NO_SUCH_KEY, arg_text
from engine.resp.reply import OK, Status

# C's LLONG_MAX / 1000 and LLONG_MIN / 1000 (truncating division).
cdef int64_t MAX_SECONDS = 9223372036854775
cdef int64_t MIN_SECONDS = -9223372036854775

cdef enum:
    EXPIRE_NX = 1
    EXPIRE_XX = 2
    EXPIRE_GT = 4
    EXPIRE_LT = 8


cpdef str type_name(object value):
    """TYPE's name for a stored value (None = no key)."""
    if value is None:
        return "none"
    if type(value) is bytes:
        return "string"
    if type(value) is Stream:
        return "stream"
    return (<bytes>value.TYPE_NAME).decode()


cdef inline bint matches(bytes pattern, bytes key) noexcept:
    return stringmatchlen(PyBytes_AS_STRING(pattern), PyBytes_GET_SIZE(pattern),
                          PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), 0)


cdef list remove_keys(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef list removed = []
    cdef Py_ssize_t i
    cdef bytes key
    for i in range(1, len(argv)):
        key = argv[i]
        # lookup first: an expired key is expired (logged as such), not deleted
        if db.lookup(key, ctx.now) is not None and db.remove(key):
            removed.append(key)
            ctx.touch(key, "g", b"del")
    if removed and ctx.logs(len(removed)):
        ctx.effects.append([b"DEL"] + removed)
    return removed


@command("del")
def del_(CommandContext ctx, list argv):
    return len(remove_keys(ctx, argv))


@command("unlink")
def unlink(CommandContext ctx, list argv):
    return len(remove_keys(ctx, argv))


@command("exists")
def exists(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef Py_ssize_t i, n = 0
    for i in range(1, len(argv)):
        if db.lookup(argv[i], ctx.now) is not None:
            n += 1
    return n


@command("touch")
def touch(CommandContext ctx, list argv):
    return exists(ctx, argv)


cdef dict TYPE_REPLIES = {name: Status(name.encode()) for name in
                          ("none", "string", "stream", *(t.decode() for t in VALUE_TYPES))}


@command("type")
def type_(CommandContext ctx, list argv):
    return TYPE_REPLIES[type_name(ctx.db.lookup(argv[1], ctx.now))]


cdef object rename(CommandContext ctx, list argv, bint nx):
    cdef Database db = ctx.db
    cdef bytes src = argv[1], dst = argv[2]
    value = db.lookup(src, ctx.now)
    if value is None:
        raise ResponseError(NO_SUCH_KEY)
    if src == dst:
        return 0 if nx else OK
    cdef int64_t expire = db.expire_at(src)
    if db.lookup(dst, ctx.now) is not None:
        if nx:
            return 0
        db.remove(dst)
    cdef int mark = db.encoding_mark(src)      # the object itself is renamed
    db.remove(src)
    db.store(dst, value)
    db.mark_encoding(dst, mark)
    if expire != -1:
        db.set_expire(dst, expire)
    ctx.touch(src, "g", b"rename_from")
    ctx.touch(dst, "g", b"rename_to")
    ctx.propagate([b"RENAME", src, dst])
    return 1 if nx else OK


@command("rename")
def rename_(CommandContext ctx, list argv):
    return rename(ctx, argv, False)


@command("renamenx")
def renamenx(CommandContext ctx, list argv):
    return rename(ctx, argv, True)


@command("keys")
def keys(CommandContext ctx, list argv):
    # Like Redis, logically expired keys are skipped but not deleted here.
    cdef bytes pattern = argv[1]
    cdef bint all_keys = pattern == b"*"
    cdef Database db = ctx.db
    cdef int64_t now = ctx.now, when
    cdef list out = []
    for key in db.keys():
        if all_keys or matches(pattern, key):
            when = db.expire_at(key)
            if when < 0 or when > now:
                out.append(key)
    return out


@command("scan")
def scan(CommandContext ctx, list argv):
    cdef uint64_t cursor = parse_cursor(argv[1])
    cdef int64_t count
    cdef bytes pattern
    count, pattern, typename = scan_options(argv, 2, SCAN_TYPE)
    cdef Database db = ctx.db
    nxt, batch = db.scan(cursor, count)
    cdef list out = []
    for key in batch:
        if pattern is not None and not matches(pattern, key):
            continue
        value = db.lookup(key, ctx.now)   # expires the key if it is due
        if value is None:
            continue
        if typename is not None and type_name(value).encode() != typename:
            continue
        out.append(key)
    return [str(nxt).encode(), out]


@command("dbsize")
def dbsize(CommandContext ctx, list argv):
    # Like Redis, counts keys whose expiry has passed until something removes them.
    return len(ctx.db)


cdef enum:
    RANDOMKEY_HELD_TRIES = 100  # due keys RANDOMKEY passes over before it answers one


@command("randomkey")
def randomkey(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef int tries = 0
    while True:
        key = db.random_key()
        if key is None or db.lookup(key, ctx.now) is not None:
            return key
        tries += 1
        if db.expiry_held and tries >= RANDOMKEY_HELD_TRIES:
            return key      # every key may be due and kept (CLIENT PAUSE): as Redis, one


cdef int flush_mode(list argv) except -1:
    if len(argv) == 2:
        if is_option(argv[1], b"sync") or is_option(argv[1], b"async"):
            return 0
    if len(argv) >= 2:
        raise ResponseError(SYNTAX)
    return 0


cdef Py_ssize_t flush(CommandContext ctx, Database db):
    """Empties db; returns how many keys it held (each one change, as in Redis).
    Keys of the caller's database count as touched (WATCH)."""
    cdef Py_ssize_t removed = len(db)
    if removed and db is ctx.db and ctx.tracking:
        ctx.touched.extend(db.keys())
    db.clear()
    return removed


@command("flushdb")
def flushdb(CommandContext ctx, list argv):
    flush_mode(argv)
    cdef Py_ssize_t removed = flush(ctx, ctx.db)
    if removed:
        ctx.propagate([b"FLUSHDB"], removed)
    return OK


@command("flushall")
def flushall(CommandContext ctx, list argv):
    flush_mode(argv)
    cdef Py_ssize_t removed = 0
    for db in ctx.keyspace.databases:
        removed += flush(ctx, <Database>db)
    if removed:
        ctx.propagate([b"FLUSHALL"], removed)
    ctx.flushed_all = True                  # persistence snapshots, with save points
    return OK


@command("swapdb")
def swapdb(CommandContext ctx, list argv):
    cdef int64_t first = parse_int_range(argv[1], INT32_MIN, INT32_MAX,
                                         b"ERR invalid first DB index")
    cdef int64_t second = parse_int_range(argv[2], INT32_MIN, INT32_MAX,
                                          b"ERR invalid second DB index")
    cdef list databases = ctx.keyspace.databases
    cdef Py_ssize_t n = len(databases)
    if first < 0 or first >= n or second < 0 or second >= n:
        raise ResponseError("ERR DB index is out of range")
    cdef Database a = databases[first], b = databases[second]
    if a is not b:
        if ctx.tracking:    # a key of either, at either index: WATCH, blocked readers
            keys = a.keys() + b.keys()
            for db in (a, b):
                ctx.touched.extend(keys if db is ctx.db else [(db.index, k) for k in keys])
        a.swap(b)
    ctx.propagate([b"SWAPDB", argv[1], argv[2]])
    return OK


cdef object expire_generic(CommandContext ctx, list argv, int64_t basetime,
                           bint seconds, str name):
    cdef Database db = ctx.db
    cdef bytes key = argv[1]
    cdef int flags = 0
    cdef Py_ssize_t j
    for j in range(3, len(argv)):
        opt = argv[j]
        if is_option(opt, b"nx"):
            flags |= EXPIRE_NX
        elif is_option(opt, b"xx"):
            flags |= EXPIRE_XX
        elif is_option(opt, b"gt"):
            flags |= EXPIRE_GT
        elif is_option(opt, b"lt"):
            flags |= EXPIRE_LT
        else:
            raise ResponseError(f"ERR Unsupported option {arg_text(opt)}")
    if flags & EXPIRE_NX and flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT):
        raise ResponseError("ERR NX and XX, GT or LT options at the same time are not compatible")
    if flags & EXPIRE_GT and flags & EXPIRE_LT:
        raise ResponseError("ERR GT and LT options at the same time are not compatible")

    cdef int64_t when = parse_int(argv[2], NULL)
    if seconds:
        if when > MAX_SECONDS or when < MIN_SECONDS:
            raise ResponseError(f"ERR invalid expire time in '{name}' command")
        when *= 1000
    if when > INT64_MAX - basetime:
        raise ResponseError(f"ERR invalid expire time in '{name}' command")
    when += basetime

    if db.lookup(key, ctx.now) is None:
        return 0
    cdef int64_t current
    if flags:
        current = db.expire_at(key)
        if flags & EXPIRE_NX and current != -1:
            return 0
        if flags & EXPIRE_XX and current == -1:
            return 0
        if flags & EXPIRE_GT and (when <= current or current == -1):
            return 0
        if flags & EXPIRE_LT and current != -1 and when >= current:
            return 0
    if when <= ctx.now and not db.loading:
        db.remove(key)
        ctx.touch(key, "g", b"del")
        ctx.propagate([b"DEL", key])
    else:
        db.set_expire(key, when)
        ctx.touch(key, "g", b"expire")
        if ctx.logs():
            ctx.effects.append([b"PEXPIREAT", key, str(when).encode()])
    return 1


def expire_handler(bint relative, bint seconds, str name):
    """The handler of EXPIRE/PEXPIRE (`relative` to now) and EXPIREAT/PEXPIREAT, in
    `seconds` or ms."""
    def handler(CommandContext ctx, list argv):
        return expire_generic(ctx, argv, ctx.now if relative else 0, seconds, name)
    return handler


command("expire")(expire_handler(True, True, "expire"))
command("pexpire")(expire_handler(True, False, "pexpire"))
command("expireat")(expire_handler(False, True, "expireat"))
command("pexpireat")(expire_handler(False, False, "pexpireat"))


cdef int64_t ttl_generic(CommandContext ctx, list argv, bint ms, bint absolute) except? -3:
    cdef Database db = ctx.db
    cdef bytes key = argv[1]
    if db.lookup(key, ctx.now) is None:
        return -2
    cdef int64_t when = db.expire_at(key)
    if when == -1:
        return -1
    cdef int64_t ttl = when if absolute else when - ctx.now
    if ttl < 0:
        ttl = 0
    return ttl if ms else (ttl + 500) // 1000


def ttl_handler(bint ms, bint absolute):
    """The handler of TTL, in `ms` (PTTL), or of the `absolute` EXPIRETIME/PEXPIRETIME."""
    def handler(CommandContext ctx, list argv):
        return ttl_generic(ctx, argv, ms, absolute)
    return handler


command("ttl")(ttl_handler(False, False))
command("pttl")(ttl_handler(True, False))
command("expiretime")(ttl_handler(False, True))
command("pexpiretime")(ttl_handler(True, True))


@command("persist")
def persist(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef bytes key = argv[1]
    if db.lookup(key, ctx.now) is None or not db.persist(key):
        return 0
    ctx.touch(key, "g", b"persist")
    ctx.propagate([b"PERSIST", key])
    return 1
