# Integers as Redis reads them, shared by the RESP codec (lengths and counts in a
# request) and the command layer (integer arguments).
from libc.stdint cimport int64_t

# Redis's string2ll: optional '-', then "0" or a digit 1-9 followed by digits; no
# spaces, no '+', no leading zeros, no "-0", within int64, at most 20 characters.
cdef bint string2ll(const char* s, Py_ssize_t slen, int64_t* out) noexcept
