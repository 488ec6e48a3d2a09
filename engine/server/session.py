"""The server's session: engine/api/session.py's Session plus the commands only a server
has - INFO, CONFIG, COMMAND, CLIENT LIST | KILL | UNBLOCK | PAUSE | UNPAUSE, SHUTDOWN,
and Pub/Sub (SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.errors import ResponseError, arg_text, subcommand_syntax
from engine.resp.reply import NULL_ARRAY, OK
from engine.commands.table import client_command, layer_commands
from engine.server.command_info import command_command
from engine.server.config.config_command import config_command
from engine.server.info import render_info
from engine.api.client_pause import Postponed, pause_mode
from engine.api.session import CLIENT_HELP, Session, Verbatim
from engine.resp.numbers import strict_int
from engine.resp.reply import Status

INT64_MAX = (1 << 63) - 1

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


class ServerSession(Session):
    """A network client's session: it runs the `server` layer's commands too."""

    layers = ("session", "server")
    commands = layer_commands(*layers)
    client_help_lines = SERVER_CLIENT_HELP

    def __init__(self, hub, conn: "ClientConnection") -> None:
        ctx = hub.engine.new_context(0, False)
        ctx.nil_array = NULL_ARRAY          # nested nulls as Redis writes them
        ctx.encode_replies = True           # entry lists as RESP, not Python objects
        ctx.tracking = True
        super().__init__(hub, ctx)
        self.conn = conn
        self.server = conn.server

    @classmethod
    def script_client(cls, hub, ctx) -> "ServerSession":
        """The scripts' client runs the server's commands scripts may call (PUBLISH,
        INFO, COMMAND...), with no connection of its own."""
        client = super().script_client(hub, ctx)
        client.conn = None
        client.server = hub.server
        return client

    def on_authenticated(self) -> None:
        self.conn.parser.authenticated = True

    def on_reset(self) -> None:
        self.server.pubsub.drop(self.conn)
        self.conn.parser.authenticated = not self.auth_required()

    def exec_one(self, argv, record):
        """Inside EXEC: every command counts in total_commands, its errors in
        errorstats; pushes are answered as EXEC's array elements."""
        stats = self.server.stats
        reply = super().exec_one(argv, record)
        if reply.__class__ is Pushes:
            reply = reply[0] if len(reply) == 1 else list(reply)
        elif reply is SILENT:
            reply = None
        elif isinstance(reply, ResponseError):
            stats.error(str(reply))
        stats.total_commands += 1
        return reply

    def client_line(self) -> bytes:
        return self.conn.client_line()

    # server commands ---------------------------------------------------------------

    @client_command("info")
    def cmd_info(self, argv):
        return Verbatim(render_info(self.server, argv[1:]))

    @client_command("config")
    def cmd_config(self, argv):
        # (the scripts' client, without a connection, may run only CONFIG HELP)
        return config_command(self.server.cfg, argv, resp3=self.ctx.resp3,
                              client_is_local=self.conn is None or self.conn.is_local)

    @client_command("command")
    def cmd_command(self, argv):
        return command_command(argv)

    @client_command("slowlog")
    def cmd_slowlog(self, argv):
        return self.server.slowlog.command(argv)

    @client_command("latency")
    def cmd_latency(self, argv):
        return self.server.latency.command(argv, self.server.stats)

    @client_command("monitor")
    def cmd_monitor(self, argv):
        """MONITOR: from now on the connection hears every command the server runs and
        may run only commands that touch no key; a second MONITOR answers nothing."""
        if self.monitor:
            return SILENT
        self.monitor = True
        self.server.start_monitor(self.conn)
        return OK

    @client_command("shutdown")
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

    @client_command("client|list")
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

    @client_command("client|kill")
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
                user = self.hub.acl.users.get(value)
                if user is None:
                    raise ResponseError("ERR No such user '%s'" % arg_text(value))
                filters.append(lambda c, u=user: c.session.user is u)
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

    @client_command("client|reply")
    def client_reply(self, argv):
        """CLIENT REPLY ON|OFF|SKIP: whether the connection answers (the client's reply
        flags, read by engine/server/fastpath.pyx); OFF and SKIP answer nothing
        themselves."""
        mode = argv[2].lower()
        if not self.set_reply_mode(mode):
            raise ResponseError("ERR syntax error")
        return OK if mode == b"on" else SILENT

    @client_command("client|pause")
    def client_pause(self, argv):
        """CLIENT PAUSE timeout [WRITE|ALL] (engine/api/client_pause.py)."""
        timeout = strict_int(argv[2])
        if timeout is None:
            raise ResponseError("ERR timeout is not an integer or out of range")
        if timeout < 0:
            raise ResponseError("ERR timeout is negative")
        if timeout > INT64_MAX - self.hub.engine.clock.now_ms():
            raise ResponseError("ERR timeout is out of range")     # (Redis 7.2+)
        if len(argv) > 4:
            raise subcommand_syntax(argv[0], argv[1])
        self.hub.client_pause.pause(timeout, pause_mode(argv))
        return OK

    @client_command("client|unpause")
    def client_unpause(self, argv):
        self.hub.client_pause.unpause()
        return OK

    @client_command("client|unblock")
    def client_unblock(self, argv):
        cid = strict_int(argv[2])
        if cid is None:
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
        if conn is None or conn.blocked_read is None or type(conn.blocked_read) is Postponed:
            return 0
        self.hub.blocked_clients.unblock(conn.blocked_read, error)
        return 1

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

    @client_command("subscribe")
    def cmd_subscribe(self, argv):
        return self._each(b"subscribe", self.server.pubsub.subscribe, argv[1:])

    @client_command("psubscribe")
    def cmd_psubscribe(self, argv):
        return self._each(b"psubscribe", self.server.pubsub.psubscribe, argv[1:])

    @client_command("unsubscribe")
    def cmd_unsubscribe(self, argv):
        return self._each(b"unsubscribe", self.server.pubsub.unsubscribe,
                          argv[1:] or list(self.channels))

    @client_command("punsubscribe")
    def cmd_punsubscribe(self, argv):
        return self._each(b"punsubscribe", self.server.pubsub.punsubscribe,
                          argv[1:] or list(self.patterns))

    @client_command("ssubscribe")
    def cmd_ssubscribe(self, argv):
        if self.cmd_name == "exec":     # in a transaction: a client that may not block
            raise ResponseError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
        return self._each(b"ssubscribe", self.server.pubsub.ssubscribe, argv[1:])

    @client_command("sunsubscribe")
    def cmd_sunsubscribe(self, argv):
        return self._each(b"sunsubscribe", self.server.pubsub.sunsubscribe,
                          argv[1:] or list(self.shard_channels))

    @client_command("spublish")
    def cmd_spublish(self, argv):
        receivers = self.server.pubsub.spublish(argv[1], argv[2])
        self.server.flush_pending()
        return receivers

    @client_command("publish")
    def cmd_publish(self, argv):
        receivers = self.server.pubsub.publish(argv[1], argv[2])
        self.server.flush_pending()
        return receivers

    @client_command("pubsub")
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
