# cython: boundscheck=False, wraparound=False, cdivision=True
"""The AOF's byte format: commands as RESP arrays of bulk strings, written through
`LogBuffer` and read back by `CommandReader`.

The writer adds a SELECT whenever the effects it is given belong to another database
than the previous ones (as Redis's AOF does), so every file replays on its own from
database 0.

The reader is strict: it accepts only what Redis's AOF loader accepts (`*<n>` then n
`$<len>` bulk strings, each line ending in CRLF; `#` annotation lines are skipped), and
tells a cut-off tail (TruncatedFileError: the data ends inside a command) from damage
(CorruptFileError: bytes that are not a command), both with the byte offset where the
last whole command ends, so recovery can truncate there and tools can report it.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free
from libc.string cimport memchr

from engine.resp.writer cimport WBuf, wb_reserve, ll_text, put_hdr, put_bulk
from persist.errors import CorruptFileError, TruncatedFileError

cdef enum:
    MAX_BULK = 512 * 1024 * 1024        # proto-max-bulk-len's default, as Redis's loader
    MAX_ARGC = 1024 * 1024 * 1024
    START_BYTES = 64 * 1024


cdef class LogBuffer:
    """Effects encoded as RESP commands, waiting to be written."""

    cdef WBuf b
    cdef public int db                  # database of the last command appended (-1: none)

    def __cinit__(self):
        wb_reserve(&self.b, START_BYTES)
        self.db = -1

    def __dealloc__(self):
        free(self.b.data)

    def __len__(self):
        return self.b.len

    cpdef void append_command(self, list argv) except *:
        """One command (a list of bytes) as a RESP array."""
        cdef bytes arg
        put_hdr(&self.b, b'*', len(argv))
        for arg in argv:
            put_bulk(&self.b, PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg))

    cpdef void append_effects(self, int db, list effects) except *:
        """A command's effects, preceded by SELECT when the database changes."""
        cdef char digits[24]
        cdef int at
        if db != self.db:
            at = ll_text(digits, db)
            put_hdr(&self.b, b'*', 2)
            put_bulk(&self.b, b"SELECT", 6)
            put_bulk(&self.b, digits + at, 24 - at)
            self.db = db
        for argv in effects:
            self.append_command(<list>argv)

    def take(self) -> bytes:
        """Everything buffered; the buffer is left empty."""
        cdef bytes out = PyBytes_FromStringAndSize(self.b.data, self.b.len)
        self.b.len = 0
        return out


cdef class CommandReader:
    """Commands from a buffer holding an AOF file's bytes (bytes, mmap...).

    `next()` returns the next command as a list of bytes, or None at the clean end;
    `offset` is where the last returned command ends (file offsets include `base`)."""

    cdef const uint8_t[:] view
    cdef Py_ssize_t pos
    cdef Py_ssize_t end
    cdef readonly object path
    cdef readonly Py_ssize_t base
    cdef readonly Py_ssize_t commands

    def __init__(self, data, path="", Py_ssize_t base=0):
        self.view = data
        self.pos = 0
        self.end = len(self.view)
        self.path = path
        self.base = base
        self.commands = 0

    @property
    def offset(self) -> int:
        return self.base + self.pos

    cdef object _truncated(self, Py_ssize_t start):
        return TruncatedFileError(self.path, self.base + start,
                                  "unexpected end of file inside a command")

    cdef object _bad(self, Py_ssize_t start, Py_ssize_t where, str what):
        return CorruptFileError(self.path, self.base + start,
                                f"{what} (byte {self.base + where})")

    cdef int64_t _line_number(self, Py_ssize_t start, Py_ssize_t* p, char kind,
                              int64_t limit) except -2:
        """Parses `<kind><digits>\\r\\n` at *p; advances *p past it."""
        cdef Py_ssize_t i = p[0], end = self.end
        cdef const uint8_t* v = &self.view[0]
        cdef int64_t n = 0
        cdef Py_ssize_t digits = 0
        if i >= end:
            raise self._truncated(start)
        if v[i] != kind:
            raise self._bad(start, i, f"expected '{chr(kind)}'")
        i += 1
        while i < end and 48 <= v[i] <= 57:
            n = n * 10 + (v[i] - 48)
            digits += 1
            if n > limit:
                raise self._bad(start, i, "number out of range")
            i += 1
        if i >= end:
            raise self._truncated(start)
        if digits == 0:
            raise self._bad(start, i, "expected a number")
        if v[i] != 13:
            raise self._bad(start, i, "expected CRLF")
        if i + 1 >= end:
            raise self._truncated(start)
        if v[i + 1] != 10:
            raise self._bad(start, i + 1, "expected CRLF")
        p[0] = i + 2
        return n

    cpdef object next(self):
        """The next command, None at the end; raises Truncated/CorruptFileError."""
        cdef Py_ssize_t p = self.pos, start, end = self.end
        cdef const uint8_t* v
        cdef const void* nl
        cdef int64_t argc, length, k
        cdef list argv
        if end == 0 or self.view is None:
            return None
        v = &self.view[0]
        while p < end and v[p] == 35:          # '#' annotation line
            nl = memchr(v + p, 10, end - p)
            if nl == NULL:
                raise self._truncated(p)
            p = <const uint8_t*>nl - v + 1
            self.pos = p
        if p >= end:
            return None
        start = p
        argc = self._line_number(start, &p, b'*', MAX_ARGC)
        if argc < 1:
            raise self._bad(start, start, "command with no arguments")
        argv = []
        for k in range(argc):
            length = self._line_number(start, &p, b'$', MAX_BULK)
            if p + length + 2 > end:
                raise self._truncated(start)
            if v[p + length] != 13 or v[p + length + 1] != 10:
                raise self._bad(start, p + length, "bulk string not followed by CRLF")
            argv.append(PyBytes_FromStringAndSize(<const char*>(v + p), length))
            p += length + 2
        self.pos = p
        self.commands += 1
        return argv

    def close(self) -> None:
        """Lets go of the buffer (an mmap can only close once nobody holds it)."""
        self.view = None
        self.end = 0

    def __iter__(self):
        return self

    def __next__(self):
        argv = self.next()
        if argv is None:
            raise StopIteration
        return argv
