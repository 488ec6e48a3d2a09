"""String commands: SET, GET, MGET, GETDEL, APPEND, STRLEN, INCR, DECR, INCRBY,
DECRBY. A string value is stored as plain `bytes` in the database.

Effects (what the log replays) are clock-independent: SET with EX/PX/EXAT/PXAT is
logged as `SET key value PXAT <ms>`, GET/NX/XX are dropped once the outcome is
known, GETDEL is logged as DEL, the counters as INCRBY with the delta.
"""
from libc.stdint cimport int64_t, INT64_MAX, INT64_MIN
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.core.keyspace cimport Database
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.resp.numbers cimport string2ll
from engine.commands.table import command
from engine.core.errors import ResponseError, WRONGTYPE, SYNTAX, NOT_INTEGER
from engine.resp.reply import OK

# proto-max-bulk-len: the largest string APPEND may build.
cdef int64_t MAX_STRING = 512 * 1024 * 1024

# SET options, as Redis's OBJ_* flags.
cdef enum:
    SET_NX = 1
    SET_XX = 2
    SET_GET = 4
    SET_KEEPTTL = 8
    SET_EX = 16
    SET_PX = 32
    SET_EXAT = 64
    SET_PXAT = 128
    # KEEPTTL and the four expiry options: any two of them exclude each other
    # (the same one given twice is allowed, the last value wins).
    SET_EXPIRY = SET_KEEPTTL | SET_EX | SET_PX | SET_EXAT | SET_PXAT


cdef inline int expire_option(object opt) noexcept:
    """The flag of SET's EX/PX/EXAT/PXAT option that opt names, 0 for any other word."""
    if is_option(opt, b"ex"):
        return SET_EX
    if is_option(opt, b"px"):
        return SET_PX
    if is_option(opt, b"exat"):
        return SET_EXAT
    if is_option(opt, b"pxat"):
        return SET_PXAT
    return 0


cdef inline object string_at(CommandContext ctx, bytes key):
    """The string at key, None if absent; WRONGTYPE for any other type."""
    cdef object value = ctx.db.lookup(key, ctx.now)
    if value is not None and type(value) is not bytes:
        raise ResponseError(WRONGTYPE)
    return value


cdef int64_t expire_ms(CommandContext ctx, object arg, bint seconds, bint relative,
                       str name) except? -1:
    """Absolute expiry in ms for SET's EX/PX/EXAT/PXAT argument (Redis's
    getExpireMillisecondsOrReply)."""
    cdef int64_t ms = parse_int(arg, NULL)
    if ms <= 0 or (seconds and ms > INT64_MAX // 1000):
        raise ResponseError(f"ERR invalid expire time in '{name}' command")
    if seconds:
        ms *= 1000
    if relative:
        if ms > INT64_MAX - ctx.now:  # Redis's signed overflow turns negative
            raise ResponseError(f"ERR invalid expire time in '{name}' command")
        ms += ctx.now
    return ms


@command("get")
def get(CommandContext ctx, list argv):
    return string_at(ctx, argv[1])


@command("set")
def set_(CommandContext ctx, list argv):
    cdef bytes key = argv[1], value = argv[2]
    cdef Py_ssize_t j = 3, argc = len(argv)
    cdef int flags = 0
    cdef bint more
    cdef int unit
    cdef object expire = None
    cdef int64_t when = 0
    while j < argc:
        opt = argv[j]
        more = j < argc - 1
        if is_option(opt, b"nx") and not flags & SET_XX:
            flags |= SET_NX
        elif is_option(opt, b"xx") and not flags & SET_NX:
            flags |= SET_XX
        elif is_option(opt, b"get"):
            flags |= SET_GET
        elif is_option(opt, b"keepttl") and not flags & (SET_EXPIRY & ~SET_KEEPTTL):
            flags |= SET_KEEPTTL
        else:
            unit = expire_option(opt) if more else 0
            if unit == 0 or flags & (SET_EXPIRY & ~unit):
                raise ResponseError(SYNTAX)
            flags |= unit
            j += 1
            expire = argv[j]
        j += 1

    if expire is not None:
        when = expire_ms(ctx, expire, flags & (SET_EX | SET_EXAT) != 0,
                         flags & (SET_EX | SET_PX) != 0, "set")
    cdef Database db = ctx.db
    cdef object old = None
    if flags & SET_GET:
        old = string_at(ctx, key)
        found = old is not None
    else:
        found = db.lookup(key, ctx.now) is not None
    if (flags & SET_NX and found) or (flags & SET_XX and not found):
        return old   # the old value with GET, else nil
    if not flags & SET_KEEPTTL:
        db.persist(key)
    db.store(key, value)
    ctx.touch(key, "$", b"set")
    if expire is not None:
        db.set_expire(key, when)
        if ctx.tracking:
            ctx.events.append(("g", b"expire", key))
    if ctx.logs():
        if expire is not None:
            ctx.effects.append([b"SET", key, value, b"PXAT", str(when).encode()])
        elif flags & SET_KEEPTTL:
            ctx.effects.append([b"SET", key, value, b"KEEPTTL"])
        else:
            ctx.effects.append([b"SET", key, value])
    if flags & SET_GET:
        return old
    return OK


@command("mget")
def mget(CommandContext ctx, list argv):
    cdef Database db = ctx.db
    cdef list out = []
    cdef Py_ssize_t i
    for i in range(1, len(argv)):
        value = db.lookup(argv[i], ctx.now)
        out.append(value if type(value) is bytes else None)
    return out


@command("getdel")
def getdel(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    value = string_at(ctx, key)
    if value is None:
        return None
    ctx.db.remove(key)
    ctx.touch(key, "g", b"del")
    ctx.propagate([b"DEL", key])
    return value


@command("append")
def append(CommandContext ctx, list argv):
    cdef bytes key = argv[1], tail = argv[2]
    value = string_at(ctx, key)
    if value is None:
        value = tail
    else:
        if PyBytes_GET_SIZE(value) + PyBytes_GET_SIZE(tail) > MAX_STRING:
            raise ResponseError("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        value = <bytes>value + tail
    ctx.db.store(key, value)
    ctx.touch(key, "$", b"append")
    ctx.propagate([b"APPEND", key, tail])
    return PyBytes_GET_SIZE(value)


@command("strlen")
def strlen(CommandContext ctx, list argv):
    value = string_at(ctx, argv[1])
    return 0 if value is None else PyBytes_GET_SIZE(value)


cdef object incr_by(CommandContext ctx, bytes key, int64_t incr):
    cdef int64_t old = 0
    value = string_at(ctx, key)
    if value is not None and not string2ll(PyBytes_AS_STRING(value),
                                           PyBytes_GET_SIZE(value), &old):
        raise ResponseError(NOT_INTEGER)
    if ((incr < 0 and old < 0 and incr < INT64_MIN - old)
            or (incr > 0 and old > 0 and incr > INT64_MAX - old)):
        raise ResponseError("ERR increment or decrement would overflow")
    cdef int64_t new = old + incr
    ctx.db.store(key, str(new).encode())   # keeps the key's TTL, as Redis does
    ctx.touch(key, "$", b"incrby")
    if ctx.logs():
        ctx.effects.append([b"INCRBY", key, str(incr).encode()])
    return new


@command("incr")
def incr(CommandContext ctx, list argv):
    return incr_by(ctx, argv[1], 1)


@command("decr")
def decr(CommandContext ctx, list argv):
    return incr_by(ctx, argv[1], -1)


@command("incrby")
def incrby(CommandContext ctx, list argv):
    return incr_by(ctx, argv[1], parse_int(argv[2], NULL))


@command("decrby")
def decrby(CommandContext ctx, list argv):
    cdef int64_t n = parse_int(argv[2], NULL)
    if n == INT64_MIN:
        raise ResponseError("ERR decrement would overflow")
    return incr_by(ctx, argv[1], -n)
