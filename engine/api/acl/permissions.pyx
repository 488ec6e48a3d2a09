# cython: language_level=3
"""A user's permissions, compiled: what the road (engine/api/road.pyx) asks per
command of a client whose user is restricted, with Redis's verdicts and their order.

A `User` holds one or more `Selector`s (the root one, then those of `(...)` rules);
a command may run when one selector allows the command (its bit in the command
bitmap, or its first argument), every key it names with the access that key's spec
declares (read for ACCESS, write for INSERT, DELETE, UPDATE: `%R~`, `%W~`, `~`) and
every channel it publishes or subscribes to. Otherwise the verdict is the most
relevant refusal of all selectors, as Redis picks it: a key or channel over a
command, and among those the argument furthest right."""
from engine.api.acl.command_ids import BITMAP_BYTES, ID_BY_NAME
from engine.core.glob cimport stringmatchlen

cdef dict _ids = ID_BY_NAME
cdef frozenset _VARIABLE_ACCESS = frozenset(("set",))  # access read from the arguments
cdef dict _CHANNEL_ARGS = {"publish": (1, False, False), "spublish": (1, False, False),
                           "subscribe": (-1, False, False), "ssubscribe": (-1, False, False),
                           "psubscribe": (-1, True, False)}
READ, WRITE = KEY_READ, KEY_WRITE       # the KeyAccess bits, for Python (user_rules.py)

# key spec flags -> the access they need
cdef dict _ACCESS_OF_FLAGS = {}

cdef int _access(tuple flags):
    cdef object known = _ACCESS_OF_FLAGS.get(flags)
    if known is not None:
        return known
    cdef int access = 0
    if "ACCESS" in flags:
        access |= KEY_READ
    if "INSERT" in flags or "DELETE" in flags or "UPDATE" in flags:
        access |= KEY_WRITE
    _ACCESS_OF_FLAGS[flags] = access
    return access


cdef inline bint _matches(bytes pattern, bytes s):
    return stringmatchlen(pattern, len(pattern), s, len(s), 0)


cdef class CommandPlan:
    """What the check needs of a command record, compiled once per record: its id,
    whether it has keys, and for the common shape (one key spec: an index and a range)
    where its keys are and the access they need, read without building a list."""


cdef dict _plans = {}       # record name -> its CommandPlan


cdef CommandPlan plan_of(object record):
    cdef CommandPlan plan = _plans.get(record.name)
    if plan is not None:
        return plan
    plan = CommandPlan()
    plan.cmd_id = _ids[record.name]
    plan.no_auth = record.no_auth
    specs = _key_specs(record)
    plan.has_keys = len(specs) > 0
    plan.channels = record.name in _CHANNEL_ARGS
    if len(specs) == 1 and record.find_keys is None and record.keyword is None:
        spec = specs[0]
        if spec.index > 0 and spec.range is not None and (spec.range[0] >= 0
                                                          or spec.range[2] == 0):
            plan.simple = True
            plan.first = spec.index
            plan.lastkey = spec.range[0]
            plan.step = spec.range[1] if spec.range[1] > 0 else 1
            plan.access = _access(spec.flags)
            if record.name in _VARIABLE_ACCESS:
                plan.access = KEY_WRITE
                plan.reads_with_get = True
    _plans[record.name] = plan
    return plan


cdef class Selector:
    """One set of permissions (see the module docstring); new ones allow nothing."""

    def __init__(self):
        self.bits = bytearray(BITMAP_BYTES)
        self.key_patterns = []
        self.pattern_at = {}
        self.channels = {}
        self.first_args = {}
        self.command_rules = []

    cpdef bint allows_command(self, int cmd_id):
        return self.all_commands or (self.bits[cmd_id >> 3] >> (cmd_id & 7)) & 1

    cpdef bint allows_key(self, bytes key, int access):
        if self.all_keys:
            return True
        cdef int flags
        cdef tuple entry
        cdef bytes pattern
        for entry in self.key_patterns:
            flags = entry[0]
            pattern = entry[1]
            if flags & access == access and \
                    stringmatchlen(pattern, len(pattern), key, len(key), 0):
                return True
        return False

    cpdef bint allows_channel(self, bytes channel, bint is_pattern):
        """A channel matches a pattern of the list; a pattern (PSUBSCRIBE) only itself."""
        if self.all_channels:
            return True
        for pattern in self.channels:
            if (pattern == channel) if is_pattern else _matches(pattern, channel):
                return True
        return False

    cdef int check(self, CommandPlan plan, object record, list argv, list refs,
                   int* pos) except -1:
        """The verdict of this selector; `pos` the refused argument's position.
        refs: [key refs or None, channel refs or None], computed once per command."""
        cdef Py_ssize_t i, last, argc = len(argv)
        cdef int cmd_id = plan.cmd_id, access
        if not self.all_commands and not plan.no_auth and \
                not (self.bits[cmd_id >> 3] >> (cmd_id & 7)) & 1:
            allowed = self.first_args.get(cmd_id) if argc > 1 else None
            if allowed is None or argv[1].lower() not in allowed:
                pos[0] = 0
                return DENIED_CMD
        if not self.all_keys and plan.has_keys:
            if plan.simple:
                last = plan.first + plan.lastkey if plan.lastkey >= 0 else argc + plan.lastkey
                access = plan.access
                if plan.reads_with_get and _gets(argv):
                    access |= KEY_READ
                i = plan.first
                while i <= last and i < argc:
                    if not self.allows_key(<bytes>argv[i], access):
                        pos[0] = i
                        return DENIED_KEY
                    i += plan.step
            else:
                if refs[0] is None:
                    refs[0] = key_refs(record, argv)
                for i, access in refs[0]:
                    if not self.allows_key(argv[i], access):
                        pos[0] = i
                        return DENIED_KEY
        if not self.all_channels and plan.channels:
            if refs[1] is None:
                refs[1] = channel_refs(record, argv)
            for i, is_pattern in refs[1]:
                if not self.allows_channel(argv[i], is_pattern):
                    pos[0] = i
                    return DENIED_CHANNEL
        return ACL_OK


cdef class User:
    """An ACL user: its flags, password digests and selectors (see the module
    docstring; engine/api/acl/user_rules.py changes and describes it)."""

    def __init__(self, bytes name):
        self.name = name
        self.passwords = []
        self.selectors = [Selector()]

    cpdef bint unrestricted(self):
        """All commands, all keys, all channels: its clients skip the check."""
        cdef Selector root = self.selectors[0]
        return root.all_commands and root.all_keys and root.all_channels

    cdef int check(self, object record, list argv, int* pos) except -1:
        cdef CommandPlan plan = plan_of(record)
        cdef int verdict, best = DENIED_CMD, best_pos = 0, at = 0
        cdef list refs = [None, None]
        cdef Selector selector
        for selector in self.selectors:
            verdict = selector.check(plan, record, argv, refs, &at)
            if verdict == ACL_OK:
                return ACL_OK
            if verdict > best or (verdict == best and at > best_pos):
                best = verdict
                best_pos = at
        pos[0] = best_pos
        return best


cpdef tuple acl_verdict(User user, object record, list argv):
    """(verdict, position of the refused argument) of `user` running argv, whose
    record (the subcommand's for a container) is `record`."""
    cdef int pos = 0
    cdef int verdict = user.check(record, argv, &pos)
    return verdict, pos


cpdef object acl_refusal(object client, object record, list argv, str context=None):
    """None when the user of `client` may run argv; else the error text for where the
    command came from (None: toplevel or multi; "lua", "exec"), the refusal counted
    and logged by the hub's users (users.py)."""
    cdef User user = client.user
    cdef int pos = 0
    cdef int verdict = user.check(record, argv, &pos)
    if verdict == ACL_OK:
        return None
    if context is None:
        context = "multi" if client.multi is not None else "toplevel"
    return client.hub.acl.refused(verdict, pos, record, argv, context, client)


# -- where a command's keys and channels are ------------------------------------------

cdef bint _gets(list argv):
    """SET ... GET: the old value is read (Redis's setGetKeys)."""
    cdef Py_ssize_t i
    for i in range(3, len(argv)):
        if len(<bytes>argv[i]) == 3 and (<bytes>argv[i]).lower() == b"get":
            return True
    return False


cdef tuple _key_specs(object record):
    """The key specs that name keys (SPUBLISH's shard channel is NOT_KEY: a channel)."""
    return tuple(spec for spec in record.key_specs if "NOT_KEY" not in spec.flags)


cpdef list key_refs(object record, list argv):
    """[(position, access)] of the keys of argv, from the record's key specs (and the
    commands whose access depends on their arguments, as Redis's getkeys procs)."""
    cdef list out = []
    cdef Py_ssize_t argc = len(argv), i, first, last, step
    specs = _key_specs(record)
    if record.find_keys is not None or record.keyword is not None:
        keys = record.keys(argv)
        taken = set()
        for n, key in enumerate(keys):
            for i in range(1, argc):
                if argv[i] is key and i not in taken:
                    taken.add(i)
                    spec = specs[0] if n == 0 or len(specs) == 1 else specs[len(specs) - 1]
                    out.append((i, _access(spec.flags)))
                    break
        return out
    if record.name in _VARIABLE_ACCESS and argc > 1:
        return [(1, KEY_WRITE | (KEY_READ if _gets(argv) else 0))]
    for spec in specs:
        if spec.index:
            first = spec.index
        else:
            continue
        if spec.range is not None:
            lastkey, step, limit = spec.range
            if lastkey >= 0:
                last = first + lastkey
            elif not limit:
                last = lastkey + argc
            else:
                last = first + ((argc - first) // limit + lastkey)
        elif spec.keynum is not None:
            keynumidx, firstkey, step = spec.keynum
            if first + keynumidx >= argc:
                continue
            try:
                numkeys = int(argv[first + keynumidx])
            except ValueError:
                continue
            if numkeys < 0 or numkeys > argc:
                continue
            first += firstkey
            last = first + numkeys - 1
        else:
            continue
        if step <= 0:
            step = 1
        access = _access(spec.flags)
        i = first
        while i <= last:
            if i >= argc or i < 1:
                break
            out.append((i, access))
            i += step
    return out


cpdef list channel_refs(object record, list argv):
    """[(position, is_pattern)] of the channels argv publishes or subscribes to."""
    how = _CHANNEL_ARGS.get(record.name)
    if how is None:
        return []
    cdef Py_ssize_t i
    if how[0] == 1:
        return [(1, False)] if len(argv) > 1 else []
    return [(i, how[1]) for i in range(1, len(argv))]
