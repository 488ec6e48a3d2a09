"""Hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HDEL, HINCRBY,
HINCRBYFLOAT, HEXISTS, HLEN, HKEYS, HVALS, HSTRLEN, HRANDFIELD, HSCAN. A hash is an
engine/core/hash_value.pyx HashValue, changed with the engine's encoding limits
(ctx.limits); one emptied by HDEL is removed (`del` event).

Effects: writes replay as themselves (HMSET as HSET), HINCRBYFLOAT as HSET with the
value it produced (as Redis propagates it: no float formatting differs on replay).
"""
from libc.stdint cimport int64_t, INT64_MAX, INT64_MIN
from libc.stdio cimport snprintf

cdef extern from "float.h":
    long double LDBL_MAX
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize

from engine.commands.context cimport CommandContext
from engine.commands.collection cimport remove_each, scan_items, random_count, check_repeats
from engine.commands.parsing cimport parse_int, parse_long_double, parse_cursor, is_option
from engine.resp.numbers cimport string2ll
from engine.commands.collection import length_handler
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, wrong_arity
from engine.core.hash_value cimport HashValue
from engine.resp.reply import OK

cdef enum:
    LONG_DOUBLE_CHARS = 5 * 1024 + 64
# HRANDFIELD ... WITHVALUES's bound on |count| (the reply holds two items per field).
cdef int64_t HALF_MAX = INT64_MAX // 2


cdef inline object hash_at(CommandContext ctx, bytes key):
    """The hash at key, None if absent; WRONGTYPE for any other type."""
    return ctx.db.lookup_typed(key, ctx.now, HashValue)


cdef object hash_for_write(CommandContext ctx, bytes key):
    """The hash at key, a new empty one stored there if absent (the caller fills it)."""
    value = hash_at(ctx, key)
    if value is None:
        value = HashValue()
        ctx.db.store(key, value)
    return value


cdef object as_map(CommandContext ctx, list flat):
    if ctx.resp3:
        return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
    return flat


cdef object set_fields(CommandContext ctx, list argv, str name):
    if len(argv) % 2:
        raise wrong_arity(name)
    cdef bytes key = argv[1]
    value = hash_for_write(ctx, key)
    cdef Py_ssize_t added = value.set_pairs(argv, 2, ctx.limits)
    ctx.db.resized(key)
    ctx.touch(key, "h", b"hset")
    ctx.propagate([b"HSET"] + argv[1:], (len(argv) - 2) // 2)
    return added


@command("hset")
def hset(CommandContext ctx, list argv):
    return set_fields(ctx, argv, "hset")


@command("hmset")
def hmset(CommandContext ctx, list argv):
    set_fields(ctx, argv, "hmset")
    return OK


@command("hsetnx")
def hsetnx(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    value = hash_at(ctx, key)
    if value is not None and argv[2] in value:
        return 0
    value = hash_for_write(ctx, key)
    value.set(argv[2], argv[3], ctx.limits)
    ctx.db.resized(key)
    ctx.touch(key, "h", b"hset")
    ctx.propagate([b"HSET", key, argv[2], argv[3]])
    return 1


@command("hget")
def hget(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    return None if value is None else value.get(argv[2])


@command("hmget")
def hmget(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    if value is None:
        return [None] * (len(argv) - 2)
    return [value.get(f) for f in argv[2:]]


@command("hgetall")
def hgetall(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    return as_map(ctx, [] if value is None else value.to_record())


@command("hkeys")
def hkeys(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    return [] if value is None else value.keys()


@command("hvals")
def hvals(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    return [] if value is None else value.values()


command("hlen")(length_handler(HashValue))


@command("hexists")
def hexists(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    return int(value is not None and argv[2] in value)


@command("hstrlen")
def hstrlen(CommandContext ctx, list argv):
    value = hash_at(ctx, argv[1])
    found = None if value is None else value.get(argv[2])
    return 0 if found is None else len(found)


@command("hdel")
def hdel(CommandContext ctx, list argv):
    return remove_each(ctx, argv, hash_at(ctx, argv[1]), HashValue.delete, "h", b"hdel")


@command("hincrby")
def hincrby(CommandContext ctx, list argv):
    cdef int64_t incr = parse_int(argv[3], NULL), old = 0
    cdef bytes key = argv[1], field = argv[2]
    value = hash_at(ctx, key)
    current = None if value is None else value.get(field)
    if current is not None and not string2ll(PyBytes_AS_STRING(current),
                                             PyBytes_GET_SIZE(current), &old):
        raise ResponseError("ERR hash value is not an integer")
    if (incr < 0 and old < 0 and incr < INT64_MIN - old) or \
            (incr > 0 and old > 0 and incr > INT64_MAX - old):
        raise ResponseError("ERR increment or decrement would overflow")
    old += incr
    value = hash_for_write(ctx, key)
    value.set(field, str(old).encode(), ctx.limits)
    ctx.db.resized(key)
    ctx.touch(key, "h", b"hincrby")
    ctx.propagate([b"HINCRBY", key, field, argv[3]])
    return old


cdef inline bint finite(long double x) noexcept:
    return -LDBL_MAX <= x <= LDBL_MAX          # false for NaN and the infinities


cdef bytes human_long_double(long double value):
    """Redis's ld2string(LD_STR_HUMAN): %.17Lf without trailing zeros (nor a
    trailing point), "-0" as "0"."""
    cdef char buf[LONG_DOUBLE_CHARS]
    cdef int n = snprintf(buf, sizeof(buf), "%.17Lf", value)
    cdef bytes text = PyBytes_FromStringAndSize(buf, n)
    if b"." in text:
        text = text.rstrip(b"0").rstrip(b".")
    if text == b"-0":
        text = b"0"
    return text


@command("hincrbyfloat")
def hincrbyfloat(CommandContext ctx, list argv):
    cdef long double incr = parse_long_double(argv[3], NULL), old = 0
    if not finite(incr):
        raise ResponseError("ERR value is NaN or Infinity")
    cdef bytes key = argv[1], field = argv[2]
    value = hash_at(ctx, key)
    current = None if value is None else value.get(field)
    if current is not None:
        try:
            old = parse_long_double(current, NULL)
        except ResponseError:
            raise ResponseError("ERR hash value is not a float") from None
    old += incr
    if not finite(old):
        raise ResponseError("ERR increment would produce NaN or Infinity")
    cdef bytes text = human_long_double(old)
    value = hash_for_write(ctx, key)
    value.set(field, text, ctx.limits)
    ctx.db.resized(key)
    ctx.touch(key, "h", b"hincrbyfloat")
    ctx.propagate([b"HSET", key, field, text])
    return text


@command("hrandfield")
def hrandfield(CommandContext ctx, list argv):
    cdef Py_ssize_t argc = len(argv)
    cdef int64_t count
    cdef bint withvalues = argc == 4
    if argc == 2:
        value = hash_at(ctx, argv[1])
        return None if value is None else value.random_field()
    count = random_count(argv[2])
    if argc > 4 or (withvalues and not is_option(argv[3], b"withvalues")):
        raise ResponseError(SYNTAX)
    if withvalues and (count < -HALF_MAX or count > HALF_MAX):
        raise ResponseError("ERR value is out of range")
    value = hash_at(ctx, argv[1])
    if value is None or count == 0:
        return []
    if count > 0:
        picked = value.random_fields(count)
    else:
        check_repeats(-count, value, 0)
        picked = value.random_picks(-count)
    if not withvalues:
        return picked
    if ctx.resp3:
        return [[f, value.get(f)] for f in picked]
    out = []
    for f in picked:
        out.append(f)
        out.append(value.get(f))
    return out


@command("hscan")
def hscan(CommandContext ctx, list argv):
    parse_cursor(argv[2])
    value = hash_at(ctx, argv[1])
    return scan_items(argv, None if value is None else value.to_record(), True, True)
