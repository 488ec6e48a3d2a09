# The one road of a command from a client (road.pyx): the client as plain data with
# flag bits, what the clients of one engine share (HubState), and the two steps every
# command takes, process_command (Redis's checks) and call (the run and what follows it).
from libc.stdint cimport int64_t

from engine.api.acl.permissions cimport User
from engine.commands.context cimport CommandContext
from engine.core.memory cimport MemoryAccount


cdef enum ClientFlag:
    CLIENT_MULTI = 1 << 0           # inside MULTI: commands are queued
    CLIENT_DIRTY_EXEC = 1 << 1      # a command failed to queue: EXEC aborts (EXECABORT)
    CLIENT_DIRTY_CAS = 1 << 2       # a WATCHed key changed: EXEC answers a null array
    CLIENT_PUBSUB = 1 << 3          # subscribed: RESP2 allows only pub/sub commands
    CLIENT_NOAUTH = 1 << 4          # not authenticated while a password is required
    CLIENT_NO_TOUCH = 1 << 5        # CLIENT NO-TOUCH ON: reads keep keys' access times
    CLIENT_NO_EVICT = 1 << 6        # CLIENT NO-EVICT ON
    CLIENT_REPLY_OFF = 1 << 7       # CLIENT REPLY OFF: nothing is answered until ON
    CLIENT_REPLY_SKIP = 1 << 8      # the current command's reply is dropped
    CLIENT_REPLY_SKIP_NEXT = 1 << 9  # CLIENT REPLY SKIP: the next command's reply is dropped
    CLIENT_SCRIPT = 1 << 10         # a script's client (redis.call)
    CLIENT_DENY_BLOCKING = 1 << 11  # a blocking command answers at once (scripts, EXEC)
    CLIENT_CLOSE_AFTER_REPLY = 1 << 12  # QUIT: the connection closes after this reply
    CLIENT_MONITOR = 1 << 13        # MONITOR: the client hears every command run
    CLIENT_ACL = 1 << 14            # its user is restricted: commands are checked (ACL)

    # flags that send every command through all of process_command's checks
    CLIENT_CHECKED = (CLIENT_MULTI | CLIENT_PUBSUB | CLIENT_NOAUTH | CLIENT_NO_TOUCH
                      | CLIENT_MONITOR | CLIENT_ACL)
    # flags under which a reply is not sent
    CLIENT_REPLY_QUIET = CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP
    CLIENT_REPLY_MODES = CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT


cdef class HubState:
    cdef public object engine
    cdef public MemoryAccount memory    # the engine's: its `limit` is maxmemory
    cdef public object stats            # CommandStats counting every call, or None
    cdef public object write_refusal    # MISCONF's text while persistence fails, or None
    cdef public object busy             # BUSY's text while a script runs long, or None
    cdef public object busy_caller      # the client whose script that is
    cdef public bint tracking           # contexts collect touched keys
    cdef public bint notify_events      # every command's keyspace events go to events()
    cdef public dict blocked            # (db, key) -> parked clients
    cdef public dict ready              # keys changed since the parked were served
    cdef public dict watchers           # (db, key) -> clients WATCHing it
    cdef public int64_t hook_ns         # calls that ran this long (ns) go to after_call; -1: none
    cdef public bint monitoring         # MONITOR clients listen: before_call hears commands
                                        # fed before they run (EVAL, FCALL)
    cdef public bint paused             # CLIENT PAUSE: postpones() says which commands wait


cdef class Client:
    cdef public HubState hub
    cdef public CommandContext ctx
    cdef public User user               # its ACL user (engine/api/acl/)
    cdef public unsigned int flags      # ClientFlag bits
    cdef list _multi                    # queued (argv, record) while CLIENT_MULTI
    cdef public dict channels           # subscribed channels (an ordered set)
    cdef public dict patterns           # subscribed patterns
    cdef public dict shard_channels     # subscribed shard channels (SSUBSCRIBE)
    cdef public object execute_in       # the engine's execute_in
    cdef public object cmd_name         # full name of the last command, once looked up
    cdef public bint null_array         # the last reply's top-level None is *-1
    cdef public bint rejected           # the last command was refused before running
    cdef dict spellings                 # command name as sent -> its record, or ENGINE

    cdef object lookup(self, bytes name)
    cdef void _set(self, unsigned int flag, bint on)


cpdef object process_command(Client client, list argv)
cpdef object call(Client client, object record, list argv)
cpdef tuple run_engine(Client client, list argv)
