"""Argument parsing shared by the stream command families."""
from libc.stdint cimport uint64_t, int64_t

from engine.core.streamid cimport StreamID, id_parse
from engine.core.stream cimport TRIM_NONE, TRIM_MAXLEN, TRIM_MINID
from engine.commands.parsing cimport parse_int
from engine.core.errors import ResponseError, INVALID_STREAM_ID, SYNTAX

cdef uint64_t U64_MAX = 0xffffffffffffffff


cdef int parse_id(object arg, StreamID* out, uint64_t missing_seq, bint strict) except -1:
    cdef bytes b = arg
    if not strict and len(b) == 1:
        if b == b"-":
            out.ms = 0
            out.seq = 0
            return 0
        if b == b"+":
            out.ms = U64_MAX
            out.seq = U64_MAX
            return 0
    if not id_parse(b, out, missing_seq, NULL):
        raise ResponseError(INVALID_STREAM_ID)
    return 0


cdef int parse_add_id(object arg, StreamID* out, bint* seq_given) except -1:
    cdef bint star = 0
    if not id_parse(arg, out, 0, &star):
        raise ResponseError(INVALID_STREAM_ID)
    seq_given[0] = not star
    return 0


cdef int parse_bound(object arg, StreamID* out, uint64_t missing_seq, bint* exclusive) except -1:
    cdef bytes b = arg
    exclusive[0] = len(b) > 1 and b[0] == 40  # '('
    if exclusive[0]:
        return parse_id(b[1:], out, missing_seq, True)
    return parse_id(b, out, missing_seq, False)


cdef inline bint _is(bytes arg, bytes word):
    return len(arg) == len(word) and arg.lower() == word


cdef Py_ssize_t parse_idmp(list argv, Py_ssize_t i, TrimArgs* args) except -1:
    """IDMP producer-id idempotent-id / IDMPAUTO producer-id at argv[i] (Redis 8.6);
    returns the position of its last argument."""
    cdef bint auto = len(<bytes>argv[i]) == 8
    cdef str name = "IDMPAUTO" if auto else "IDMP"
    if args.idmp_pid:
        raise ResponseError("ERR IDMP/IDMPAUTO specified multiple times")
    if not argv[i + 1]:
        raise ResponseError(f"ERR {name} requires a non-empty producer ID")
    args.idmp_pid = i + 1
    if auto:
        return i + 1
    if not argv[i + 2]:
        raise ResponseError("ERR IDMP requires a non-empty idempotent ID")
    args.idmp_iid = i + 2
    return i + 2


cdef int ref_policy_word(bytes arg):
    if len(arg) == 7 and arg.lower() == b"keepref":
        return REF_KEEP
    if len(arg) == 6 and arg.lower() == b"delref":
        return REF_DEL
    if len(arg) == 5 and arg.lower() == b"acked":
        return REF_ACKED
    return -1


cdef int parse_trim_args(list argv, TrimArgs* args, bint xadd,
                         uint64_t node_max_entries) except -1:
    cdef Py_ssize_t i = 2, argc = len(argv), more
    cdef bint limit_given = 0, policy_given = 0
    cdef int64_t n
    cdef int policy
    cdef bytes opt, nxt
    args.strategy = TRIM_NONE
    args.policy = REF_KEEP
    args.maxlen = 0
    args.minid.ms = args.minid.seq = 0
    args.approx = 0
    args.limit = 0
    args.nomkstream = 0
    args.id_given = 0
    args.seq_given = 1
    args.id.ms = args.id.seq = 0
    args.idmp_pid = args.idmp_iid = 0
    while i < argc:
        more = argc - 1 - i
        opt = argv[i]
        if xadd and opt == b"*":
            break
        elif more and _is(opt, b"maxlen") or more and _is(opt, b"minid"):
            if args.strategy != TRIM_NONE:
                raise ResponseError("ERR syntax error, MAXLEN and MINID options at the same "
                                    "time are not compatible")
            args.approx = 0
            nxt = argv[i + 1]
            if more >= 2 and (nxt == b"~" or nxt == b"="):
                args.approx = nxt == b"~"
                i += 1
            if opt.lower() == b"maxlen":
                n = parse_int(argv[i + 1], NULL)
                if n < 0:
                    raise ResponseError("ERR The MAXLEN argument must be >= 0.")
                args.maxlen = n
                args.strategy = TRIM_MAXLEN
            else:
                parse_id(argv[i + 1], &args.minid, 0, True)
                args.strategy = TRIM_MINID
            i += 1
        elif more and _is(opt, b"limit"):
            args.limit = parse_int(argv[i + 1], NULL)
            if args.limit < 0:
                raise ResponseError("ERR The LIMIT argument must be >= 0.")
            limit_given = 1
            i += 1
        elif xadd and _is(opt, b"nomkstream"):
            args.nomkstream = 1
        elif xadd and (more >= 2 and _is(opt, b"idmp") or more and _is(opt, b"idmpauto")):
            i = parse_idmp(argv, i, args)
        elif (policy := ref_policy_word(opt)) >= 0:
            if policy_given:
                raise ResponseError(SYNTAX)
            args.policy = <RefPolicy>policy
            policy_given = 1
        elif xadd:
            parse_add_id(opt, &args.id, &args.seq_given)
            args.id_given = 1
            break
        else:
            raise ResponseError(SYNTAX)
        i += 1
    args.next_arg = i
    if args.idmp_pid and args.id_given:
        raise ResponseError("ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
    if args.limit and args.strategy == TRIM_NONE:
        raise ResponseError("ERR syntax error, LIMIT cannot be used without specifying "
                            "a trimming strategy")
    if not xadd and args.strategy == TRIM_NONE:
        raise ResponseError("ERR syntax error, XTRIM must be called with a trimming strategy")
    if limit_given:
        if not args.approx:
            raise ResponseError("ERR syntax error, LIMIT cannot be used without the special "
                                "~ option")
    elif args.approx:
        args.limit = 100 * node_max_entries
        if args.limit <= 0 or args.limit > 1000000:
            args.limit = 10000
    return 0
