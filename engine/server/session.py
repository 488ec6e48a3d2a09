"""The server's session: engine/api/session.py's Session plus the commands only a server
has - INFO, CONFIG, COMMAND, CLIENT LIST | KILL | UNBLOCK, SHUTDOWN, and Pub/Sub
(SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from engine.api.command_stats import Outcome
from engine.core.errors import ResponseError, arg_text, subcommand_syntax
from engine.resp.reply import NULL_ARRAY, OK
from engine.commands.table import layer_commands
from engine.server.command_info import command_command
from engine.server.config.config_command import config_command
from engine.server.info import render_info
from engine.api.session import CLIENT_HELP, Session, Verbatim
from engine.resp.reply import Status

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.connection import ClientConnection


class Pushes(list):
    """Several push replies from one command (SUBSCRIBE a b c): each is written as a
    push (RESP3 `>`; a plain array in RESP2)."""

    __slots__ = ()


class _NoReply:
    __slots__ = ()


NO_REPLY = _NoReply()     # the command answers nothing (SHUTDOWN closes the connection)
SILENT = _NoReply()       # the command answers nothing and the client goes on (CLIENT REPLY)

# CLIENT REPLY's flag bits in ServerSession.replies (0: every reply is sent)
REPLY_OFF = 1             # CLIENT REPLY OFF: no reply until CLIENT REPLY ON
REPLY_SKIP = 2            # the current command's reply is dropped
REPLY_SKIP_NEXT = 4       # CLIENT REPLY SKIP: the next command's reply is dropped
QUIET = REPLY_OFF | REPLY_SKIP


class ServerSession(Session):
    """A network client's session: it runs the `server` layer's commands too."""

    layers = ("session", "server")
    commands = layer_commands(*layers)

    def __init__(self, hub, conn: "ClientConnection") -> None:
        ctx = hub.engine.new_context(0, False)
        ctx.nil_array = NULL_ARRAY          # nested nulls as Redis writes them
        ctx.encode_replies = True           # entry lists as RESP, not Python objects
        ctx.tracking = True
        super().__init__(hub, ctx)
        self.conn = conn
        self.server = conn.server
        self.stats = conn.server.stats
        self.replies = 0                    # CLIENT REPLY's flag bits (REPLY_*)

    def on_authenticated(self) -> None:
        self.conn.parser.authenticated = True

    def on_reset(self) -> None:
        self.server.pubsub.drop(self.conn)
        self.replies &= REPLY_SKIP          # RESET's own reply still obeys a SKIP
        self.conn.parser.authenticated = not self.auth_required()

    def exec_one(self, argv, record):
        """Inside EXEC: every command counts in commandstats; errors in errorstats."""
        server = self.server
        start = time.perf_counter_ns()
        reply = super().exec_one(argv, record)
        if reply.__class__ is Pushes:
            reply = reply[0] if len(reply) == 1 else list(reply)
        elif reply is SILENT:
            reply = None
        server.stats.count(record.name, time.perf_counter_ns() - start,
                           Outcome.FAILED if isinstance(reply, ResponseError) else Outcome.CALLED)
        if isinstance(reply, ResponseError):
            server.stats.error(str(reply))
        server.stats.total_commands += 1
        return reply

    def client_line(self) -> bytes:
        return self.conn.client_line()

    # server commands ---------------------------------------------------------------

    def cmd_info(self, argv):
        return Verbatim(render_info(self.server, argv[1:]))

    def cmd_config(self, argv):
        return config_command(self.server.cfg, argv, resp3=self.ctx.resp3,
                              client_is_local=self.conn.is_local)

    def cmd_command(self, argv):
        return command_command(argv)

    def cmd_shutdown(self, argv):
        save = None
        for arg in argv[1:]:
            a = arg.lower()
            if a == b"abort":
                raise ResponseError("ERR No shutdown in progress.")
            if a not in (b"nosave", b"save", b"now", b"force"):
                raise ResponseError("ERR syntax error")
            if a in (b"nosave", b"save"):
                if save is not None:
                    raise ResponseError("ERR syntax error")
                save = a == b"save"
        if self.hub.busy is not None:
            if save is not False:
                raise ResponseError(self.hub.busy)
            self.server.exit_inside_script()
        self.server.shutdown_save = save
        self.server.request_shutdown()
        self.conn.hold_until_exit()
        return NO_REPLY

    # CLIENT subcommands of a server ---------------------------------------------

    def client_list(self, argv):
        """CLIENT LIST [TYPE type | ID id...]: one filter, as in Redis."""
        server = self.server
        conns = list(server.clients.values())
        opt = argv[2].lower() if len(argv) > 2 else None
        if opt == b"type" and len(argv) == 4:
            kind = argv[3].lower()
            if kind not in (b"normal", b"master", b"replica", b"slave", b"pubsub"):
                raise ResponseError("ERR Unknown client type '%s'" % arg_text(argv[3]))
            conns = [c for c in conns if c.client_type() == kind.decode()]
        elif opt == b"id" and len(argv) > 3:
            ids = []
            for raw in argv[3:]:
                try:
                    cid = int(raw)
                except ValueError:
                    raise ResponseError("ERR Invalid client ID")
                if cid <= 0:                 # Redis >= 7.2 (7.0 lists nothing)
                    raise ResponseError("ERR Invalid client ID")
                ids.append(cid)
            conns = [server.clients[cid] for cid in dict.fromkeys(ids) if cid in server.clients]
        elif opt is not None:
            raise ResponseError("ERR syntax error")
        return Verbatim(b"".join(c.client_line() + b"\n" for c in conns))

    def client_kill(self, argv):
        server = self.server
        if len(argv) == 3:               # the old form: CLIENT KILL addr:port
            for conn in list(server.clients.values()):
                if conn.addr == argv[2] and not conn.closing:
                    server.kill_client(conn, self.conn)
                    return OK
            raise ResponseError("ERR No such client")
        if len(argv) % 2:
            raise ResponseError("ERR syntax error")
        filters = []
        skipme = True
        for i in range(2, len(argv), 2):
            opt, value = argv[i].lower(), argv[i + 1]
            if opt == b"id":
                try:
                    cid = int(value)
                except ValueError:
                    cid = 0
                if cid <= 0:
                    raise ResponseError("ERR client-id should be greater than 0")
                filters.append(lambda c, cid=cid: c.session.id == cid)
            elif opt == b"type":
                kind = value.lower()
                if kind not in (b"normal", b"master", b"replica", b"slave", b"pubsub"):
                    raise ResponseError("ERR Unknown client type '%s'" % arg_text(value))
                filters.append(lambda c, k=kind.decode(): c.client_type() == k)
            elif opt == b"user":
                if value != b"default":
                    raise ResponseError("ERR No such user '%s'" % arg_text(value))
            elif opt == b"addr":
                filters.append(lambda c, a=value: c.addr == a)
            elif opt == b"laddr":
                filters.append(lambda c, a=value: c.laddr == a)
            elif opt == b"skipme":
                v = value.lower()
                if v == b"yes":
                    skipme = True
                elif v == b"no":
                    skipme = False
                else:
                    raise ResponseError("ERR syntax error")
            elif opt == b"maxage":
                try:
                    age = int(value)
                except ValueError:
                    raise ResponseError("ERR syntax error")
                filters.append(lambda c, age=age: c.age() >= age)
            else:
                raise ResponseError("ERR syntax error")
        killed = 0
        for conn in list(server.clients.values()):
            if (skipme and conn is self.conn) or conn.closing:
                continue
            if all(f(conn) for f in filters):
                server.kill_client(conn, self.conn)
                killed += 1
        return killed

    def client_reply(self, argv):
        """CLIENT REPLY ON|OFF|SKIP: whether the connection answers (see
        ClientConnection.call_slow); OFF and SKIP answer nothing themselves."""
        mode = argv[2].lower()
        if mode == b"on":
            self.replies = 0
            return OK
        if mode == b"off":
            self.replies |= REPLY_OFF
        elif mode == b"skip":
            if not self.replies & REPLY_OFF:
                self.replies |= REPLY_SKIP_NEXT
        else:
            raise ResponseError("ERR syntax error")
        return SILENT

    def reply_done(self) -> None:
        """A command has been answered (or its reply dropped): a SKIP moves on to the
        next command."""
        self.replies = (self.replies & REPLY_OFF) | (
            REPLY_SKIP if self.replies & REPLY_SKIP_NEXT else 0)

    def client_unblock(self, argv):
        try:
            cid = int(argv[2])
        except ValueError:
            raise ResponseError("ERR value is not an integer or out of range")
        error = None
        if len(argv) == 4:
            how = argv[3].lower()
            if how == b"error":
                error = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
            elif how != b"timeout":
                raise ResponseError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
        elif len(argv) > 4:
            raise subcommand_syntax(argv[0], argv[1])
        conn = self.server.clients.get(cid)
        if conn is None or conn.blocked_read is None:
            return 0
        self.hub.blocked_clients.unblock(conn.blocked_read, error)
        return 1

    def client_help(self, argv):
        return [Status(line.encode()) for line in SERVER_CLIENT_HELP]

    # Pub/Sub ---------------------------------------------------------------------

    def _confirm(self, kind: bytes, name) -> list:
        """A (un)subscribe's push: the client's count of subscriptions of the kind's
        family (shard channels are counted apart, as in Redis)."""
        if kind in SHARD_CONFIRMATIONS:
            return [kind, name, len(self.shard_channels)]
        return [kind, name, len(self.channels) + len(self.patterns)]

    def _each(self, kind: bytes, change, names: list) -> Pushes:
        """Applies a (un)subscribe to each name, one confirmation push per name; with
        no names (an UNSUBSCRIBE from nothing) one push with a nil name."""
        out = Pushes()
        for name in names:
            change(self.conn, name)
            out.append(self._confirm(kind, name))
        if not out:
            out.append(self._confirm(kind, None))
        return out

    def cmd_subscribe(self, argv):
        return self._each(b"subscribe", self.server.pubsub.subscribe, argv[1:])

    def cmd_psubscribe(self, argv):
        return self._each(b"psubscribe", self.server.pubsub.psubscribe, argv[1:])

    def cmd_unsubscribe(self, argv):
        return self._each(b"unsubscribe", self.server.pubsub.unsubscribe,
                          argv[1:] or list(self.channels))

    def cmd_punsubscribe(self, argv):
        return self._each(b"punsubscribe", self.server.pubsub.punsubscribe,
                          argv[1:] or list(self.patterns))

    def cmd_ssubscribe(self, argv):
        if self.cmd_name == "exec":     # in a transaction: a client that may not block
            raise ResponseError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
        return self._each(b"ssubscribe", self.server.pubsub.ssubscribe, argv[1:])

    def cmd_sunsubscribe(self, argv):
        return self._each(b"sunsubscribe", self.server.pubsub.sunsubscribe,
                          argv[1:] or list(self.shard_channels))

    def cmd_spublish(self, argv):
        receivers = self.server.pubsub.spublish(argv[1], argv[2])
        self.server.flush_pending()
        return receivers

    def cmd_publish(self, argv):
        receivers = self.server.pubsub.publish(argv[1], argv[2])
        self.server.flush_pending()
        return receivers

    def cmd_pubsub(self, argv):
        pubsub = self.server.pubsub
        sub = argv[1].lower()
        if sub == b"channels" or sub == b"shardchannels":
            if len(argv) > 3:
                raise subcommand_syntax(argv[0], argv[1])
            return pubsub.matching_channels(argv[2] if len(argv) == 3 else None,
                                            sub == b"shardchannels")
        if sub == b"numsub" or sub == b"shardnumsub":
            out = []
            for channel in argv[2:]:
                out += [channel, pubsub.numsub(channel, sub == b"shardnumsub")]
            return out
        if sub == b"numpat":
            return pubsub.pattern_count()
        return [Status(line.encode()) for line in PUBSUB_HELP]


SERVER_CLIENT_HELP = CLIENT_HELP[:-2] + (
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
) + CLIENT_HELP[-2:]

SHARD_CONFIRMATIONS = (b"ssubscribe", b"sunsubscribe")

PUBSUB_HELP = (
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Print this help.",
)
