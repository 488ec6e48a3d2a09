"""ACL and its subcommands (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT,
GENPASS, LOG, DRYRUN, LOAD, SAVE, HELP): methods of the Session (a mixin, as
scripts.py's), on the hub's users (users.py)."""
from __future__ import annotations

import secrets
from typing import Any

from engine.api.acl.command_ids import CATEGORIES, category_members
from engine.api.acl.permissions import acl_verdict
from engine.api.acl.user_rules import RuleError, getuser_reply
from engine.api.acl.users import DEFAULT, DRYRUN, NO_ACLFILE, SAVE_FAILED
from engine.commands.dispatch import check
from engine.commands.table import COMMANDS, client_command
from engine.core.errors import ResponseError, arg_text, unknown_subcommand
from engine.resp.numbers import strict_int
from engine.resp.reply import OK, Status

GENPASS_RANGE = ("ERR ACL GENPASS argument must be the number of bits for the output "
                 "password, a positive number up to 4096")
NOT_INTEGER = "ERR value is not an integer or out of range"


class AclCommands:
    """The Session's ACL command (see the module docstring)."""

    hub: Any
    user: Any

    @client_command("acl")
    def cmd_acl(self, argv: list) -> Any:
        sub = argv[1].lower()
        handler = _SUBCOMMANDS.get(sub)
        if handler is None:
            raise unknown_subcommand(argv[0], argv[1])
        acl = self.hub.acl
        acl.caller = self           # (its own connection closes after this reply)
        try:
            return handler(self, argv)
        finally:
            acl.caller = None

    def acl_setuser(self, argv: list) -> Any:
        try:
            self.hub.acl.setuser(argv[2], argv[3:])
        except RuleError as err:
            raise ResponseError("ERR %s" % err) from None
        return OK

    def acl_getuser(self, argv: list) -> Any:
        user = self.hub.acl.users.get(argv[2])
        if user is None:
            return None
        reply = getuser_reply(user)
        return reply if self.ctx.resp3 else [x for pair in reply.items() for x in pair]

    def acl_deluser(self, argv: list) -> Any:
        if DEFAULT in argv[2:]:
            raise ResponseError("ERR The 'default' user cannot be removed")
        return self.hub.acl.deluser(argv[2:])

    def acl_list(self, argv: list) -> Any:
        return self.hub.acl.list_lines()

    def acl_users(self, argv: list) -> Any:
        return [user.name for user in self.hub.acl.sorted_users()]

    def acl_whoami(self, argv: list) -> Any:
        return self.user.name

    def acl_cat(self, argv: list) -> Any:
        if len(argv) > 3:
            raise _wrong_arity(argv)
        if len(argv) == 2:
            return [c.encode() for c in CATEGORIES]
        category = argv[2].lower().decode("utf-8", "replace")
        if category not in CATEGORIES:
            raise ResponseError("ERR Unknown category '%s'" % arg_text(argv[2]))
        return [r.name.encode() for r in category_members(category)]

    def acl_genpass(self, argv: list) -> Any:
        if len(argv) > 3:
            raise _wrong_arity(argv)
        bits = 256
        if len(argv) == 3:
            bits = strict_int(argv[2])
            if bits is None:
                raise ResponseError(NOT_INTEGER)
            if not 0 < bits <= 4096:
                raise ResponseError(GENPASS_RANGE)
        chars = (bits + 3) // 4
        return secrets.token_hex((chars + 1) // 2)[:chars].encode()

    def acl_log(self, argv: list) -> Any:
        if len(argv) > 3:
            raise _wrong_arity(argv)
        log = self.hub.acl.log
        count = None
        if len(argv) == 3:
            if argv[2].lower() == b"reset":
                log.reset()
                return OK
            count = strict_int(argv[2])
            if count is None:
                raise ResponseError(NOT_INTEGER)
        entries = log.reply(count)
        if self.ctx.resp3:
            return entries
        return [[x for pair in entry.items() for x in pair] for entry in entries]

    def acl_dryrun(self, argv: list) -> Any:
        user = self.hub.acl.users.get(argv[2])
        if user is None:
            raise ResponseError("ERR User '%s' not found" % arg_text(argv[2]))
        target = argv[3:]
        record = COMMANDS.get(target[0].lower())
        if record is None:
            raise ResponseError("ERR Command '%s' not found" % arg_text(target[0]))
        record = check(record, target)
        verdict, pos = acl_verdict(user, record, target)
        if verdict == 0:
            return OK
        text = DRYRUN[verdict] % (record.name if verdict == 1
                                  else target[pos].decode("utf-8", "surrogateescape"))
        return text.encode("utf-8", "surrogateescape")

    def acl_load(self, argv: list) -> Any:
        try:
            self._with_aclfile().load_aclfile()
        except RuleError as err:
            raise ResponseError("ERR %s" % err) from None
        return OK

    def acl_save(self, argv: list) -> Any:
        try:
            self._with_aclfile().save_aclfile()
        except OSError:
            raise ResponseError(SAVE_FAILED) from None
        return OK

    def _with_aclfile(self):
        """The hub's users, when an aclfile is configured (else Redis's error)."""
        if self.hub.acl.aclfile is None:
            raise ResponseError(NO_ACLFILE)
        return self.hub.acl

    def acl_help(self, argv: list) -> Any:
        return [Status(line.encode()) for line in ACL_HELP]


def _wrong_arity(argv: list) -> ResponseError:
    return ResponseError("ERR unknown subcommand or wrong number of arguments for '%s'. "
                         "Try ACL HELP." % arg_text(argv[1]))


_SUBCOMMANDS = {name.encode(): getattr(AclCommands, "acl_" + name) for name in (
    "setuser", "getuser", "deluser", "list", "users", "whoami", "cat", "genpass", "log",
    "dryrun", "load", "save", "help")}

ACL_HELP = (
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
)
