# A user's permissions, compiled (permissions.pyx): what the road asks per command of a
# client whose user is restricted.

cdef enum AclVerdict:
    ACL_OK = 0
    DENIED_CMD = 1
    DENIED_KEY = 2
    DENIED_AUTH = 3
    DENIED_CHANNEL = 4

cdef enum KeyAccess:
    KEY_READ = 1
    KEY_WRITE = 2


cdef class CommandPlan:
    cdef int cmd_id
    cdef bint no_auth
    cdef bint has_keys                  # (key specs)
    cdef bint simple                    # one spec, an index and a range: keys by position
    cdef Py_ssize_t first, lastkey, step
    cdef int access                     # KeyAccess of those keys
    cdef bint reads_with_get            # SET: its key is read too when GET is given
    cdef bint channels                  # publishes or subscribes


cdef class Selector:
    cdef public bytearray bits          # one bit per command id (command_ids.py)
    cdef public bint all_commands       # +@all: future commands too, bits not read
    cdef public bint all_keys
    cdef public bint all_channels
    cdef public list key_patterns       # (KeyAccess bits, pattern bytes), in order
    cdef public dict pattern_at         # pattern -> its index in key_patterns
    cdef public dict channels           # channel patterns (bytes) -> None, in order
    cdef public dict first_args         # command id -> allowed first arguments (lower)
    cdef public list command_rules      # the command rules since +@all/-@all, as written

    cdef int check(self, CommandPlan plan, object record, list argv, list refs,
                   int* pos) except -1
    cpdef bint allows_command(self, int cmd_id)
    cpdef bint allows_key(self, bytes key, int access)
    cpdef bint allows_channel(self, bytes channel, bint is_pattern)


cdef class User:
    cdef public bytes name
    cdef public bint enabled            # the `on` flag
    cdef public bint disabled           # the `off` flag (a new user has neither... until
                                        # SETUSER: Redis keeps them as two flags)
    cdef public bint nopass
    cdef public int sanitize_payload    # 0, or (skip-)sanitize-payload (user_rules.py):
                                        # recorded, RESTORE always validates here
    cdef public list passwords          # SHA-256 hex digests (str), in order
    cdef public list selectors          # the root selector first
    cdef public bint deleted            # removed by ACL DELUSER / ACL LOAD

    cdef int check(self, object record, list argv, int* pos) except -1
    cpdef bint unrestricted(self)


cpdef tuple acl_verdict(User user, object record, list argv)
cpdef object acl_refusal(object client, object record, list argv, str context=*)
cpdef list key_refs(object record, list argv)
cpdef list channel_refs(object record, list argv)
