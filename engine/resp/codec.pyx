# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RESP codec of the Sluice server: the request parser and the reply encoder.

Requests
--------
`RequestParser` is fed the bytes read from a socket and hands back complete
commands as argv lists (lists of bytes), exactly as Redis 7.0's
processInputBuffer splits them (networking.c): RESP multibulk requests, inline
commands (split with sdssplitargs' quoting rules), Redis's protocol errors with
their exact texts and its limits::

    parser = RequestParser()              # one per connection
    parser.feed(data)                     # may raise QueryBufferLimitError
    try:
        for argv in parser:               # lazily, one command at a time
            ...                           # execute, encode the reply
    except ProtocolError as err:          # the commands before it were yielded
        write(encode_error(str(err)))     # "-ERR Protocol error: ...\\r\\n"
        close()

(`get_commands()` returns a batch instead; see RequestParser.)

After a ProtocolError or QueryBufferLimitError the parser stays failed (feed
ignores data, get_command(s) raise again): the connection must be closed. On a
QueryBufferLimitError Redis closes without a reply.

Replies
-------
`encode_reply(obj, resp3, null_array)` / `ReplyBuffer.write(...)` encode what
the engine returns:

=====================  ==========================  ===========================
Python value           RESP2                       RESP3
=====================  ==========================  ===========================
bytes (also bytearray,  ``$<len>`` bulk string      same
memoryview; str as
UTF-8)
engine.resp.reply.Status    ``+text`` simple string     same
int                    ``:n`` (beyond 64 bits:     ``:n`` (beyond 64 bits:
                       bulk string of the digits)  ``(`` big number)
bool                   ``:1`` / ``:0``             ``#t`` / ``#f``
float                  bulk string ``%.17g``       ``,%.17g`` (``inf``,
                       (``inf``/``-inf``), as       ``-inf``, ``nan``)
                       Redis 7.0's addReplyDouble
None                   ``$-1`` (``*-1`` at top     ``_``
                       level if null_array)
NULL_ARRAY             ``*-1``                     ``_``
list / tuple           ``*n`` array               same
dict                   ``*2n`` flat array (as      ``%n`` map
                       Redis's addReplyMapLen)
set / frozenset /      ``*n`` array                ``~n`` set
SetReply (ordered)
BigNumber (bytes)      bulk string                 ``(`` big number
Verbatim (bytes)       bulk string                 ``=`` verbatim string (its
                                                   format, ``txt`` by default)
exception instance     ``-text`` error (str(exc),  same
(ResponseError)        CR/LF made safe)
engine.resp.writer.    copied as is (the command   same
EncodedReply           encoded it for the
                       context's protocol)
=====================  ==========================  ===========================

`NULL_ARRAY` is the way to ask for a null array *inside* an array (every other
nested None is a null bulk). Redis 7.0 writes a nested ``*-1`` (RESP2) in:
the deleted entry of an XREADGROUP history read (``[id, nil]``), and the
consumer list of XPENDING's summary of an empty PEL (``[0, nil, nil, nil]``:
the last nil is an array). Put NULL_ARRAY in the reply where that nil goes.
(If engine.resp.reply defines NULL_ARRAY, that object is used, so the command layer
need not import the server package.)

`encode_push(items, resp3)` writes a pub/sub push message (``>n`` in RESP3, a
plain ``*n`` array in RESP2); `encode_error(text)` an error reply.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.list cimport PyList_GET_SIZE, PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.long cimport PyLong_AsLongLongAndOverflow
from libc.limits cimport INT_MAX, LLONG_MAX
from libc.stdint cimport int64_t
from libc.math cimport isinf
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memmove

from engine.resp.reply import Status
from engine.resp.numbers cimport string2ll
from engine.resp.writer cimport (EncodedReply, wb_reserve, put_ll, put_hdr, put_lit,
                                 put_bulk, put_simple)

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)

# ---------------------------------------------------------------------------
# Redis's limits (server.h / networking.c of Redis 7.0)

PROTO_INLINE_MAX_SIZE = 64 * 1024          # an inline line / a length line without CRLF
PROTO_MBULK_BIG_ARG = 32 * 1024            # bulks this big are read straight into place
PROTO_MAX_BULK_LEN = 512 * 1024 * 1024     # proto-max-bulk-len default
CLIENT_MAX_QUERYBUF_LEN = 1024 * 1024 * 1024  # client-query-buffer-limit default
UNAUTH_MAX_MULTIBULK_LEN = 10              # before AUTH when a password is required
UNAUTH_MAX_BULK_LEN = 16384
UNAUTH_MAX_QUERYBUF_LEN = 1024 * 1024

cdef enum:
    C_INLINE_MAX = 64 * 1024
    C_BIG_ARG = 32 * 1024
    C_UNAUTH_MBULK = 10
    C_UNAUTH_BULK = 16384
    C_UNAUTH_QUERYBUF = 1024 * 1024
    REQ_UNKNOWN = 0
    REQ_INLINE = 1
    REQ_MULTIBULK = 2
    MAX_DEPTH = 1000
    MIN_BUF = 16 * 1024
    ARGV_PREALLOC = 1024                   # as Redis: argv sized up front up to 1024
    SHRINK_ABOVE = 1024 * 1024

cdef Py_ssize_t PY_SSIZE_MAX = <Py_ssize_t>(<size_t>-1 >> 1)


class ProtocolError(Exception):
    """The request stream broke the protocol. str(err) is the full error reply
    text, e.g. "ERR Protocol error: invalid bulk length": send
    encode_error(str(err)), then close the connection."""


class QueryBufferLimitError(Exception):
    """The client's unprocessed input passed client-query-buffer-limit (1 MiB
    before AUTH when a password is required). Redis closes such a client without
    a reply."""


from engine.resp.reply import NULL_ARRAY, BigNumber, SetReply, Verbatim

cdef object _NULL_ARRAY = NULL_ARRAY
cdef object _Status = Status
cdef object _BigNumber = BigNumber
cdef object _Verbatim = Verbatim
cdef object _SetReply = SetReply


# ---------------------------------------------------------------------------
# Helpers shared by both directions

cdef inline bint is_space(unsigned char c) noexcept:
    return c == c' ' or (9 <= c <= 13)


cdef inline bint is_hex(unsigned char c) noexcept:
    return (c'0' <= c <= c'9') or (c'a' <= c <= c'f') or (c'A' <= c <= c'F')


cdef inline int hex_val(unsigned char c) noexcept:
    if c <= c'9':
        return c - c'0'
    if c >= c'a':
        return c - c'a' + 10
    return c - c'A' + 10


cdef object split_args(const unsigned char* line, Py_ssize_t n):
    """Redis's sdssplitargs on a line without NUL bytes: a list of bytes, or None
    for unbalanced quotes (or a closing quote not followed by a space)."""
    cdef list out = []
    cdef Py_ssize_t i = 0, tl
    cdef unsigned char c
    cdef bint inq, insq, done
    cdef unsigned char* tok = <unsigned char*>malloc(n + 1)
    if tok == NULL:
        raise MemoryError()
    try:
        while True:
            while i < n and is_space(line[i]):
                i += 1
            if i >= n:
                return out
            inq = insq = done = False
            tl = 0
            while not done:
                c = line[i] if i < n else 0
                if inq:
                    if (c == c'\\' and i + 3 < n and line[i + 1] == c'x'
                            and is_hex(line[i + 2]) and is_hex(line[i + 3])):
                        tok[tl] = <unsigned char>(hex_val(line[i + 2]) * 16 + hex_val(line[i + 3]))
                        tl += 1
                        i += 3
                    elif c == c'\\' and i + 1 < n:
                        i += 1
                        c = line[i]
                        if c == c'n':
                            c = c'\n'
                        elif c == c'r':
                            c = c'\r'
                        elif c == c't':
                            c = c'\t'
                        elif c == c'b':
                            c = 8
                        elif c == c'a':
                            c = 7
                        tok[tl] = c
                        tl += 1
                    elif c == c'"':
                        if i + 1 < n and not is_space(line[i + 1]):
                            return None
                        done = True
                    elif i >= n:
                        return None
                    else:
                        tok[tl] = c
                        tl += 1
                elif insq:
                    if c == c'\\' and i + 1 < n and line[i + 1] == c"'":
                        i += 1
                        tok[tl] = c"'"
                        tl += 1
                    elif c == c"'":
                        if i + 1 < n and not is_space(line[i + 1]):
                            return None
                        done = True
                    elif i >= n:
                        return None
                    else:
                        tok[tl] = c
                        tl += 1
                else:
                    if i >= n or c == c' ' or c == c'\n' or c == c'\r' or c == c'\t':
                        done = True
                    elif c == c'"':
                        inq = True
                    elif c == c"'":
                        insq = True
                    else:
                        tok[tl] = c
                        tl += 1
                if i < n:
                    i += 1
            out.append(PyBytes_FromStringAndSize(<char*>tok, tl))
    finally:
        free(tok)


def split_inline(line):
    """sdssplitargs for one line (bytes without the newline): the argv, or None
    when the quotes are unbalanced. The inline requests' splitter, shared through
    engine.resp.args.split_args (configuration lines, the AOF manifest)."""
    cdef bytes b = bytes(line)
    if b"\0" in b:
        raise ValueError("an inline request line cannot hold NUL bytes")
    return split_args(<const unsigned char*>PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


# ---------------------------------------------------------------------------
# Request parser

cdef class RequestParser:
    """Incremental RESP request parser for one connection (Redis 7.0 semantics).

    RequestParser(proto_max_bulk_len=512 MiB, query_buffer_limit=1 GiB,
                  authenticated=True)

    - feed(data, queued=0): appends bytes read from the socket (any buffer).
      Raises QueryBufferLimitError when the unprocessed input plus `queued`
      (bytes of commands queued by MULTI, which Redis counts too) would pass
      query_buffer_limit (1 MiB while not authenticated).
    - get_commands() -> list of argv lists: every complete command buffered now.
      While `authenticated` is false it returns at most one command, so that a
      successful AUTH (the server sets `authenticated = True`) lifts the tighter
      limits before the next command is parsed: loop until it returns [].
    - get_command() -> argv list or None; iterating the parser yields commands
      one at a time too (lazily: limits changed between steps apply).
    - The argv lists are not tracked by the cyclic GC (they hold only bytes);
      do not store objects that could refer back to them in them.
    - A protocol error raises ProtocolError (text "ERR Protocol error: ...");
      get_commands() first returns the commands that precede it, and raises on
      the next call.

    Set `authenticated = False` when requirepass is set and the client has not
    authenticated: Redis then refuses multibulk counts > 10 ("unauthenticated
    multibulk length") and bulks > 16384 bytes ("unauthenticated bulk length").
    Bulks of 32 KiB or more are read directly into their final bytes object (no
    re-copying while they arrive; the object is allocated at the declared size
    once the header is parsed, as Redis preallocates its query buffer). A
    declared length above proto_max_bulk_len fails at once.

    The 64 KiB checks ("too big inline request", "too big mbulk/bulk count
    string") apply, as in Redis, when a line has no terminator yet and more than
    64 KiB are buffered; Redis reads 16 KiB at a time, so feeding chunks of up
    to 16 KiB reproduces its behaviour byte for byte.
    """

    def __cinit__(self):
        self.buf = NULL
        self.cap = 0
        self.start = 0
        self.end = 0
        self.scanned = 0
        self.reqtype = REQ_UNKNOWN
        self.multibulklen = 0
        self.bulklen = -1
        self.argv = None
        self.big = None
        self.big_filled = 0
        self.big_skip = 0
        self.error = None

    def __init__(self, long long proto_max_bulk_len=PROTO_MAX_BULK_LEN,
                 long long query_buffer_limit=CLIENT_MAX_QUERYBUF_LEN,
                 bint authenticated=True):
        self.proto_max_bulk_len = proto_max_bulk_len
        self.query_buffer_limit = query_buffer_limit
        self.authenticated = authenticated

    def __dealloc__(self):
        free(self.buf)
        self.buf = NULL

    cdef Py_ssize_t _pending(self) noexcept:
        cdef Py_ssize_t n = self.end - self.start
        if self.big is not None:
            n += self.big_filled + 2 - self.big_skip
        return n

    @property
    def pending(self):
        """Bytes received and not yet handed out as commands (Redis's qbuf)."""
        return self._pending()

    @property
    def capacity(self):
        """Bytes allocated for the input buffer (Redis's qbuf + qbuf-free)."""
        return self.cap

    @property
    def in_command(self):
        """True while a command is partly received."""
        return self.reqtype != REQ_UNKNOWN or self.end > self.start

    cpdef feed(self, data, Py_ssize_t queued=0):
        """Appends received bytes. Raises QueryBufferLimitError past the limit."""
        cdef Py_buffer view
        cdef const char* p
        cdef Py_ssize_t n
        if self.error is not None:
            return
        if type(data) is bytes:
            p = PyBytes_AS_STRING(data)
            n = PyBytes_GET_SIZE(data)
            self._feed(p, n, queued)
        else:
            PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            try:
                self._feed(<const char*>view.buf, view.len, queued)
            finally:
                PyBuffer_Release(&view)

    cdef int _feed(self, const char* p, Py_ssize_t n, Py_ssize_t queued) except -1:
        cdef Py_ssize_t k
        cdef long long limit = self.query_buffer_limit
        if not self.authenticated and limit > C_UNAUTH_QUERYBUF:
            limit = C_UNAUTH_QUERYBUF
        if <long long>queued + <long long>self._pending() + <long long>n > limit:
            self.error = QueryBufferLimitError(
                "Closing client that reached max query buffer length")
            self._raise_stored()
        if self.big is not None:
            # a big bulk is being received: straight into its bytes object
            k = PyBytes_GET_SIZE(self.big) - self.big_filled
            if k > n:
                k = n
            memcpy(PyBytes_AS_STRING(self.big) + self.big_filled, p, k)
            self.big_filled += k
            p += k
            n -= k
            if n and self.big_skip:     # its CRLF (never checked, as in Redis)
                k = self.big_skip if self.big_skip < n else n
                self.big_skip -= k
                p += k
                n -= k
        return self._append(p, n)

    cdef int _append(self, const char* data, Py_ssize_t n) except -1:
        cdef Py_ssize_t live, newcap
        cdef char* nb
        if n <= 0:
            return 0
        live = self.end - self.start
        if live == 0:
            self.start = self.end = 0
        if self.end + n > self.cap:
            if live + n <= self.cap:
                memmove(self.buf, self.buf + self.start, live)
            else:
                newcap = self.cap * 2
                if newcap < live + n:
                    newcap = live + n
                if newcap < MIN_BUF:
                    newcap = MIN_BUF
                if self.start == 0:
                    nb = <char*>realloc(self.buf, newcap)
                    if nb == NULL:
                        raise MemoryError()
                else:
                    nb = <char*>malloc(newcap)
                    if nb == NULL:
                        raise MemoryError()
                    memcpy(nb, self.buf + self.start, live)
                    free(self.buf)
                self.buf = nb
                self.cap = newcap
            self.start = 0
            self.end = live
        memcpy(self.buf + self.end, data, n)
        self.end += n
        return 0

    cdef void _release_if_idle(self) noexcept:
        if self.start == self.end:
            self.start = self.end = 0
            self.scanned = 0
            if self.cap > SHRINK_ABOVE:
                free(self.buf)
                self.buf = NULL
                self.cap = 0

    cdef Py_ssize_t _scan(self, char target) noexcept:
        """Index in buf of the first `target` after start, or -1 when there is
        none before the end of the data or a NUL byte (Redis searches with
        strchr, which stops at NUL: such a line waits for its 64 KiB error)."""
        cdef const char* p
        cdef const char* e
        cdef char c
        if self.start == self.end:
            return -1
        p = self.buf + self.start + self.scanned
        e = self.buf + self.end
        while p < e:
            c = p[0]
            if c == target:
                return p - self.buf
            if c == 0:
                break
            p += 1
        self.scanned = p - (self.buf + self.start)
        return -1

    cdef _fail(self, str text):
        self.error = ProtocolError("ERR Protocol error: " + text)
        self._raise_stored()

    cdef object _parse_inline(self):
        cdef Py_ssize_t nl, lineend
        nl = self._scan(c'\n')
        if nl < 0:
            if self.end - self.start > C_INLINE_MAX:
                self._fail("too big inline request")
            return None
        lineend = nl
        if nl != self.start and self.buf[nl - 1] == c'\r':
            lineend -= 1
        args = split_args(<const unsigned char*>self.buf + self.start, lineend - self.start)
        if args is None:
            self._fail("unbalanced quotes in request")
        self.start = nl + 1
        self.scanned = 0
        return args

    cdef inline int _add_arg(self, bytes arg) except -1:
        if self.argc < PyList_GET_SIZE(self.argv):
            Py_INCREF(arg)
            Py_DECREF(None)
            PyList_SET_ITEM(self.argv, self.argc, arg)
        else:
            self.argv.append(arg)
        self.argc += 1
        return 0

    cdef object _parse_multibulk(self):
        cdef Py_ssize_t nl, avail, k
        cdef int64_t ll
        cdef bint ok
        cdef unsigned char c
        cdef bytes big
        if self.big is not None:
            if self.big_filled < PyBytes_GET_SIZE(self.big) or self.big_skip:
                return None
            self._add_arg(self.big)
            self.big = None
            self.bulklen = -1
            self.multibulklen -= 1
        elif self.multibulklen == 0:
            nl = self._scan(c'\r')
            if nl < 0:
                if self.end - self.start > C_INLINE_MAX:
                    self._fail("too big mbulk count string")
                return None
            if nl + 2 > self.end:       # the byte after '\r' (taken as '\n')
                return None
            ok = string2ll(self.buf + self.start + 1, nl - self.start - 1, &ll)
            if not ok or ll > INT_MAX:
                self._fail("invalid multibulk length")
            if ll > C_UNAUTH_MBULK and not self.authenticated:
                self._fail("unauthenticated multibulk length")
            self.start = nl + 2
            self.scanned = 0
            if ll <= 0:
                return []
            self.multibulklen = ll
            if ll <= ARGV_PREALLOC:
                # sized up front and filled by index (slots hold None until
                # then: the list is reachable through gc.get_referents(parser))
                self.argv = PyList_New(<Py_ssize_t>ll)
                for k in range(<Py_ssize_t>ll):
                    Py_INCREF(None)
                    PyList_SET_ITEM(self.argv, k, None)
            else:
                self.argv = []                            # grows as arguments arrive
            self.argc = 0
        while self.multibulklen:
            if self.bulklen == -1:
                nl = self._scan(c'\r')
                if nl < 0:
                    if self.end - self.start > C_INLINE_MAX:
                        self._fail("too big bulk count string")
                    return None
                if nl + 2 > self.end:
                    return None
                c = <unsigned char>self.buf[self.start]
                if c != c'$':
                    if c == c'\r' or c == c'\n':
                        c = c' '        # addReplyErrorFormat maps CR/LF to spaces
                    self._fail("expected '$', got '"
                               + (<bytes>PyBytes_FromStringAndSize(<char*>&c, 1)).decode(
                                   "utf-8", "surrogateescape") + "'")
                ok = string2ll(self.buf + self.start + 1, nl - self.start - 1, &ll)
                if not ok or ll < 0 or ll > self.proto_max_bulk_len or ll > PY_SSIZE_MAX - 2:
                    self._fail("invalid bulk length")
                if ll > C_UNAUTH_BULK and not self.authenticated:
                    self._fail("unauthenticated bulk length")
                self.start = nl + 2
                self.scanned = 0
                self.bulklen = ll
                avail = self.end - self.start
                if ll >= C_BIG_ARG and avail < ll + 2:
                    big = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>ll)
                    k = avail if avail < ll else <Py_ssize_t>ll
                    memcpy(PyBytes_AS_STRING(big), self.buf + self.start, k)
                    self.big_filled = k
                    self.big_skip = 2 - (avail - k)
                    self.start = self.end
                    self.big = big
                    return None
            if self.end - self.start < self.bulklen + 2:
                return None
            self._add_arg(PyBytes_FromStringAndSize(self.buf + self.start, <Py_ssize_t>self.bulklen))
            self.start += <Py_ssize_t>self.bulklen + 2
            self.bulklen = -1
            self.multibulklen -= 1
        return self.argv

    cdef object _parse_one(self):
        cdef object r
        while True:
            if self.reqtype == REQ_UNKNOWN:
                if self.start == self.end:
                    return None
                self.reqtype = REQ_MULTIBULK if self.buf[self.start] == c'*' else REQ_INLINE
            if self.reqtype == REQ_INLINE:
                r = self._parse_inline()
            else:
                r = self._parse_multibulk()
            if r is None:
                return None
            self.reqtype = REQ_UNKNOWN
            self.argv = None
            self.multibulklen = 0
            self.bulklen = -1
            if PyList_GET_SIZE(r):
                # argv holds only bytes, so it cannot be part of a reference
                # cycle: keep it out of the cyclic GC (a pipeline of 10^5
                # commands would otherwise trigger full collections)
                PyObject_GC_UnTrack(<void*>r)
                return r

    cdef _raise_stored(self):
        # a fresh instance each time: the stored one never carries a traceback
        # (which would keep the caller's frames alive as long as the parser)
        err = self.error
        raise type(err)(*err.args)

    cpdef object get_command(self):
        """The next complete command (a list of bytes), or None."""
        if self.error is not None:
            self._raise_stored()
        r = self._parse_one()
        self._release_if_idle()
        return r

    cpdef list get_commands(self):
        """Every complete command buffered (at most one while not authenticated)."""
        cdef list out = []
        cdef object cmd
        if self.error is not None:
            self._raise_stored()
        try:
            while True:
                cmd = self._parse_one()
                if cmd is None:
                    break
                out.append(cmd)
                if not self.authenticated:
                    break
        except ProtocolError:
            if not out:
                raise
        self._release_if_idle()
        return out

    def __iter__(self):
        return self

    def __next__(self):
        r = self.get_command()
        if r is None:
            raise StopIteration
        return r


# ---------------------------------------------------------------------------
# Reply encoder: a growable C buffer and C-level writers

cdef bytes _text_bytes(object text):
    if isinstance(text, bytes):
        return <bytes>text
    if isinstance(text, (bytearray, memoryview)):
        return bytes(text)
    if not isinstance(text, str):
        text = str(text)
    try:
        return (<str>text).encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return (<str>text).encode("utf-8", "replace")


cdef int put_error(WBuf* b, object text) except -1:
    """-<text>\\r\\n with Redis's addReplyErrorFormat hygiene: CR/LF trimmed off
    both ends, inner ones turned into spaces (else the protocol would break)."""
    cdef bytes t = _text_bytes(text)
    cdef const char* s = PyBytes_AS_STRING(t)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(t), i, lo = 0
    cdef char* d
    while lo < n and (s[lo] == c'\r' or s[lo] == c'\n'):
        lo += 1
    while n > lo and (s[n - 1] == c'\r' or s[n - 1] == c'\n'):
        n -= 1
    if n > lo and s[lo] == c'-':        # the caller already wrote the '-'
        lo += 1
    wb_reserve(b, n - lo + 3)
    d = b.data + b.len
    d[0] = c'-'
    for i in range(lo, n):
        d[1 + i - lo] = c' ' if (s[i] == c'\r' or s[i] == c'\n') else s[i]
    d[1 + n - lo] = c'\r'
    d[2 + n - lo] = c'\n'
    b.len += n - lo + 3
    return 0


cdef int put_double(WBuf* b, double v, bint resp3) except -1:
    cdef char dbuf[64]
    cdef int n
    if isinf(v):
        if resp3:
            return put_lit(b, ",inf\r\n", 6) if v > 0 else put_lit(b, ",-inf\r\n", 7)
        return put_lit(b, "$3\r\ninf\r\n", 9) if v > 0 else put_lit(b, "$4\r\n-inf\r\n", 10)
    n = snprintf(dbuf, sizeof(dbuf), "%.17g", v)
    if resp3:
        return put_simple(b, c',', dbuf, n)
    return put_bulk(b, dbuf, n)


cdef int put_bigint(WBuf* b, object v, bint resp3) except -1:
    cdef bytes digits = str(v).encode("ascii")
    if resp3:
        return put_simple(b, c'(', PyBytes_AS_STRING(digits), PyBytes_GET_SIZE(digits))
    return put_bulk(b, PyBytes_AS_STRING(digits), PyBytes_GET_SIZE(digits))


cdef int put_int(WBuf* b, object v, bint resp3) except -1:
    cdef int overflow = 0
    cdef long long x = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow:
        return put_bigint(b, v, resp3)
    wb_reserve(b, 24)
    b.data[b.len] = c':'
    b.len += 1
    put_ll(b, x)
    b.data[b.len] = c'\r'
    b.data[b.len + 1] = c'\n'
    b.len += 2
    return 0


cdef int put_obj(WBuf* b, object o, bint resp3, int depth) except -1:
    """Encodes one reply value (see the module docstring for the mapping)."""
    cdef type t = type(o)
    cdef Py_buffer view
    cdef bytes enc
    cdef Py_ssize_t at
    if t is bytes:
        return put_bulk(b, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
    if t is EncodedReply:
        return put_lit(b, (<EncodedReply>o).b.data, (<EncodedReply>o).b.len)
    if t is list or t is tuple:
        if depth >= MAX_DEPTH:
            raise ValueError("reply nested too deeply")
        put_hdr(b, c'*', len(o))
        for item in o:
            put_obj(b, item, resp3, depth + 1)
        return 0
    if t is int:
        return put_int(b, o, resp3)
    if o is None:
        return put_lit(b, "_\r\n", 3) if resp3 else put_lit(b, "$-1\r\n", 5)
    if t is _Status:
        return put_simple(b, c'+', PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
    if t is dict:
        if depth >= MAX_DEPTH:
            raise ValueError("reply nested too deeply")
        if resp3:
            put_hdr(b, c'%', len(o))
        else:
            put_hdr(b, c'*', 2 * len(o))
        for k, v in (<dict>o).items():
            put_obj(b, k, resp3, depth + 1)
            put_obj(b, v, resp3, depth + 1)
        return 0
    if t is bool:
        if resp3:
            return put_lit(b, "#t\r\n", 4) if o is True else put_lit(b, "#f\r\n", 4)
        return put_lit(b, ":1\r\n", 4) if o is True else put_lit(b, ":0\r\n", 4)
    if t is float:
        return put_double(b, PyFloat_AS_DOUBLE(o), resp3)
    if o is _NULL_ARRAY:
        return put_lit(b, "_\r\n", 3) if resp3 else put_lit(b, "*-1\r\n", 5)
    if isinstance(o, BaseException):
        return put_error(b, str(o))
    # subclasses and the rarer types
    if t is _BigNumber:
        if resp3:
            return put_simple(b, c'(', PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
        return put_bulk(b, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
    if t is _Verbatim and resp3:
        enc = <bytes>o.format + b":" + bytes(o)
        at = b.len
        put_bulk(b, PyBytes_AS_STRING(enc), PyBytes_GET_SIZE(enc))
        b.data[at] = c'='               # a bulk string's framing, typed verbatim
        return 0
    if isinstance(o, bytes):
        if isinstance(o, _Status):
            return put_simple(b, c'+', PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
        return put_bulk(b, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))
    if isinstance(o, str):
        enc = (<str>o).encode("utf-8", "surrogateescape")
        return put_bulk(b, PyBytes_AS_STRING(enc), PyBytes_GET_SIZE(enc))
    if isinstance(o, (bytearray, memoryview)):
        PyObject_GetBuffer(o, &view, PyBUF_SIMPLE)
        try:
            put_bulk(b, <const char*>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)
        return 0
    if isinstance(o, bool):
        return put_obj(b, bool(o), resp3, depth)
    if isinstance(o, int):
        return put_int(b, o, resp3)
    if isinstance(o, float):
        return put_double(b, float(o), resp3)
    if t is _SetReply or isinstance(o, (set, frozenset)):
        if depth >= MAX_DEPTH:
            raise ValueError("reply nested too deeply")
        put_hdr(b, c'~' if resp3 else c'*', len(o))
        for item in o:
            put_obj(b, item, resp3, depth + 1)
        return 0
    if isinstance(o, (list, tuple, dict)):
        return put_obj(b, (dict if isinstance(o, dict) else list)(o), resp3, depth)
    raise TypeError(f"cannot encode a {t.__name__} as a RESP reply")


cdef int put_reply(WBuf* b, object o, bint resp3, bint null_array) except -1:
    if o is None and null_array:
        return put_lit(b, "_\r\n", 3) if resp3 else put_lit(b, "*-1\r\n", 5)
    return put_obj(b, o, resp3, 0)


cdef int put_push(WBuf* b, object items, bint resp3) except -1:
    put_hdr(b, c'>' if resp3 else c'*', len(items))
    for item in items:
        put_obj(b, item, resp3, 1)
    return 0


cdef class ReplyBuffer:
    """Output buffer of one connection: replies are appended at C speed and
    taken out as one bytes object per socket write.

        out = ReplyBuffer()
        for argv in parser.get_commands():
            out.write(reply, resp3, ctx.null_array)   # or out.write_error(str(err))
        transport.write(out.take())

    A failed write (TypeError for an unencodable value) leaves the buffer as it
    was before that call."""

    cpdef write(self, object obj, bint resp3=False, bint null_array=False):
        """Appends a reply; a top-level None is a null array if null_array."""
        cdef Py_ssize_t mark = self.b.len
        try:
            put_reply(&self.b, obj, resp3, null_array)
        except BaseException:
            self.b.len = mark
            raise

    cpdef write_error(self, object text):
        """Appends an error reply: -<text>\\r\\n (text like "ERR syntax error")."""
        put_error(&self.b, text)

    cpdef write_push(self, object items, bint resp3=False):
        """Appends a push message (>n in RESP3, a plain array in RESP2)."""
        cdef Py_ssize_t mark = self.b.len
        try:
            put_push(&self.b, items, resp3)
        except BaseException:
            self.b.len = mark
            raise

    cpdef write_raw(self, object data):
        """Appends bytes that are already RESP."""
        cdef Py_buffer view
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            put_lit(&self.b, <const char*>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)

    cpdef bytes take(self):
        """Everything written so far, as bytes; the buffer is emptied."""
        cdef bytes out = PyBytes_FromStringAndSize(self.b.data, self.b.len)
        self.b.len = 0
        if self.b.cap > SHRINK_ABOVE:
            free(self.b.data)
            self.b.data = NULL
            self.b.cap = 0
        return out


cdef bytes wb_finish(WBuf* b):
    return PyBytes_FromStringAndSize(b.data, b.len)


def encode_reply(obj, bint resp3=False, bint null_array=False) -> bytes:
    """One reply as RESP bytes (RESP3 if resp3). null_array: a top-level None is
    a null array (*-1), as when the command context set ctx.null_array."""
    cdef WBuf b
    b.data = NULL
    b.len = 0
    b.cap = 0
    try:
        put_reply(&b, obj, resp3, null_array)
        return wb_finish(&b)
    finally:
        free(b.data)


def encode_error(text) -> bytes:
    """An error reply: -<text>\\r\\n, e.g. encode_error("ERR syntax error").
    CR/LF at the ends are dropped and inner ones become spaces, as Redis does."""
    cdef WBuf b
    b.data = NULL
    b.len = 0
    b.cap = 0
    try:
        put_error(&b, text)
        return wb_finish(&b)
    finally:
        free(b.data)


def encode_push(items, bint resp3=False) -> bytes:
    """A pub/sub push message: >n (RESP3) or *n (RESP2) followed by the items,
    e.g. encode_push([b"message", channel, payload], resp3)."""
    cdef WBuf b
    b.data = NULL
    b.len = 0
    b.cap = 0
    try:
        put_push(&b, items, resp3)
        return wb_finish(&b)
    finally:
        free(b.data)
