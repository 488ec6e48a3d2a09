"""String commands: SET, SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX, GET, GETEX,
MGET, GETDEL, APPEND, STRLEN, INCR, DECR, INCRBY, DECRBY (GETRANGE, SETRANGE and
INCRBYFLOAT are in string_edits.pyx). A string value is stored as plain `bytes` in
the database.

Effects (what the log replays) are clock-independent: SET with EX/PX/EXAT/PXAT
(and SETEX, PSETEX) is logged as `SET key value PXAT <ms>`, GET/NX/XX are dropped
once the outcome is known (SETNX and GETSET become SET), GETEX is logged as
PEXPIREAT, PERSIST or DEL (an absolute time already past), GETDEL as DEL, the
counters as INCRBY with the delta.
"""
from libc.stdint cimport int64_t, INT64_MAX, INT64_MIN
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.core.keyspace cimport Database, ENCODED_AS_RAW
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.resp.numbers cimport string2ll
from engine.commands.table import command
from engine.core.errors import ResponseError, WRONGTYPE, SYNTAX, NOT_INTEGER, wrong_arity
from engine.resp.reply import OK

# proto-max-bulk-len: the largest string APPEND may build.

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


cdef object string_at(CommandContext ctx, bytes key):
    cdef object value = ctx.db.lookup(key, ctx.now)
    if value is not None and type(value) is not bytes:
        raise ResponseError(WRONGTYPE)
    return value


cdef int check_string_length(CommandContext ctx, int64_t offset, int64_t length) except -1:
    """A string of offset + length bytes (both >= 0) must fit proto-max-bulk-len."""
    if offset > ctx.max_string - length:
        raise ResponseError("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    return 0


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
    store_string(ctx, key, value, flags & SET_KEEPTTL, when)
    if flags & SET_GET:
        return old
    return OK


cdef int store_string(CommandContext ctx, bytes key, bytes value, bint keepttl,
                      int64_t when) except -1:
    """Sets key to value as SET does: its TTL kept (keepttl), set to `when` (ms, 0 =
    none) or removed; fires `set` (and `expire`) and logs SET (PXAT/KEEPTTL)."""
    cdef Database db = ctx.db
    if not keepttl:
        db.persist(key)
    db.store(key, value)
    ctx.touch(key, "$", b"set")
    if when:
        db.set_expire(key, when)
        if ctx.tracking:
            ctx.events.append(("g", b"expire", key))
    if ctx.logs():
        if when:
            ctx.effects.append([b"SET", key, value, b"PXAT", str(when).encode()])
        elif keepttl:
            ctx.effects.append([b"SET", key, value, b"KEEPTTL"])
        else:
            ctx.effects.append([b"SET", key, value])
    return 0


@command("setnx")
def setnx(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    if ctx.db.lookup(key, ctx.now) is not None:
        return 0
    store_string(ctx, key, argv[2], False, 0)
    return 1


cdef object set_expiring(CommandContext ctx, list argv, bint seconds, str name):
    """SETEX/PSETEX key ttl value: SET with EX/PX."""
    cdef int64_t when = expire_ms(ctx, argv[2], seconds, True, name)
    store_string(ctx, argv[1], argv[3], False, when)
    return OK


@command("setex")
def setex(CommandContext ctx, list argv):
    return set_expiring(ctx, argv, True, "setex")


@command("psetex")
def psetex(CommandContext ctx, list argv):
    return set_expiring(ctx, argv, False, "psetex")


@command("getset")
def getset(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    old = string_at(ctx, key)
    store_string(ctx, key, argv[2], False, 0)
    return old


cdef int check_pairs(list argv, str name) except -1:
    if len(argv) % 2 == 0:
        raise wrong_arity(name)
    return 0


cdef int store_pairs(CommandContext ctx, list argv) except -1:
    """MSET's writes: each key's TTL goes; logged as one MSET."""
    cdef Database db = ctx.db
    cdef Py_ssize_t i
    cdef bytes key
    for i in range(1, len(argv), 2):
        key = argv[i]
        db.persist(key)
        db.store(key, argv[i + 1])
        ctx.touch(key, "$", b"set")
    if ctx.logs(len(argv) // 2):
        ctx.effects.append([b"MSET"] + argv[1:])
    return 0


@command("mset")
def mset(CommandContext ctx, list argv):
    check_pairs(argv, "mset")
    store_pairs(ctx, argv)
    return OK


@command("msetnx")
def msetnx(CommandContext ctx, list argv):
    check_pairs(argv, "msetnx")
    cdef Database db = ctx.db
    cdef Py_ssize_t i
    for i in range(1, len(argv), 2):
        if db.lookup(argv[i], ctx.now) is not None:
            return 0
    store_pairs(ctx, argv)
    return 1


@command("getex")
def getex(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef Py_ssize_t j = 2, argc = len(argv)
    cdef int flags = 0, unit
    cdef bint persist = False
    cdef object expire = None
    while j < argc:
        opt = argv[j]
        if is_option(opt, b"persist") and not flags:
            persist = True
        else:
            unit = expire_option(opt) if j < argc - 1 else 0
            if unit == 0 or persist or flags & ~unit:
                raise ResponseError(SYNTAX)
            flags |= unit
            j += 1
            expire = argv[j]
        j += 1
    value = string_at(ctx, key)
    if value is None:
        return None
    cdef int64_t when = 0
    if expire is not None:
        when = expire_ms(ctx, expire, flags & (SET_EX | SET_EXAT) != 0,
                         flags & (SET_EX | SET_PX) != 0, "getex")
    cdef Database db = ctx.db
    if expire is not None and when <= ctx.now and not db.loading:
        db.remove(key)   # an EXAT/PXAT already past
        ctx.touch(key, "g", b"del")
        ctx.propagate([b"DEL", key])
    elif expire is not None:
        db.set_expire(key, when)
        ctx.touch(key, "g", b"expire")
        if ctx.logs():
            ctx.effects.append([b"PEXPIREAT", key, str(when).encode()])
    elif persist and db.persist(key):
        ctx.touch(key, "g", b"persist")
        ctx.propagate([b"PERSIST", key])
    return value


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


cdef bint shared_integer(bytes s):
    cdef int64_t v
    return string2ll(s, len(s), &v) and 0 <= v < 10000


@command("append")
def append(CommandContext ctx, list argv):
    cdef bytes key = argv[1], tail = argv[2]
    value = string_at(ctx, key)
    cdef Py_ssize_t length = PyBytes_GET_SIZE(tail)
    if value is None:
        ctx.db.store(key, tail)
    else:
        check_string_length(ctx, PyBytes_GET_SIZE(value), length)
        value = None        # the keyspace's reference alone lets it grow in place
        length = ctx.db.append(key, tail)
        ctx.db.mark_encoding(key, ENCODED_AS_RAW)     # Redis unshares it: raw
    ctx.touch(key, "$", b"append")
    ctx.propagate([b"APPEND", key, tail])
    return length


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
