# The RESP codec, for cimport by the server: the request parser and the reply
# buffer keep their state in C fields and expose cpdef methods that Cython callers
# reach without a Python call.

from engine.resp.writer cimport WBuf, RespBuffer


cdef class RequestParser:
    # limits (see the class docstring)
    cdef public long long proto_max_bulk_len
    cdef public long long query_buffer_limit
    cdef public bint authenticated
    # unconsumed input: buf[start:end]; buf[start:start+scanned] has no '\r'/'\n'/NUL
    cdef char* buf
    cdef Py_ssize_t cap
    cdef Py_ssize_t start
    cdef Py_ssize_t end
    cdef Py_ssize_t scanned
    # the command being parsed (Redis's client fields of the same names)
    cdef int reqtype
    cdef long long multibulklen
    cdef long long bulklen
    cdef list argv
    cdef Py_ssize_t argc
    # a big bulk (>= 32 KiB) read straight into its final bytes object
    cdef bytes big
    cdef Py_ssize_t big_filled
    cdef Py_ssize_t big_skip
    cdef readonly object error

    cpdef feed(self, data, Py_ssize_t queued=*)
    cpdef object get_command(self)
    cpdef list get_commands(self)
    cdef object _parse_one(self)
    cdef object _parse_inline(self)
    cdef object _parse_multibulk(self)
    cdef int _add_arg(self, bytes arg) except -1
    cdef Py_ssize_t _scan(self, char target) noexcept
    cdef Py_ssize_t _pending(self) noexcept
    cdef int _feed(self, const char* p, Py_ssize_t n, Py_ssize_t queued) except -1
    cdef int _append(self, const char* data, Py_ssize_t n) except -1
    cdef void _release_if_idle(self) noexcept
    cdef _fail(self, str text)
    cdef _raise_stored(self)


cdef class ReplyBuffer(RespBuffer):

    cpdef write(self, object obj, bint resp3=*, bint null_array=*)
    cpdef write_error(self, object text)
    cpdef write_push(self, object items, bint resp3=*)
    cpdef write_raw(self, object data)
    cpdef bytes take(self)
