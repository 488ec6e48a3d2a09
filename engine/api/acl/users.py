"""The ACL users of one engine (the hub's `acl`): the `default` user and requirepass
as Redis maps them, authentication (SHA-256 digests compared in constant time),
the refusals of the check (ACL LOG, INFO's acl_access_denied_*), users from the
config file or the aclfile (ACL LOAD all or nothing, ACL SAVE atomically)."""
from __future__ import annotations

import hmac
import os
from typing import Callable, Iterable, Optional

from persist import write_atomically

from engine.api.acl.acl_log import REASONS, AclLog
from engine.api.acl.permissions import User
from engine.api.acl.user_rules import (UNKNOWN_NAME, RuleError, apply_rule, apply_rules, assign,
                                       describe_user, merge_selector_args, new_user,
                                       password_digest)

DEFAULT = b"default"
NO_ACLFILE = ("ERR This Redis instance is not configured to use an ACL file. You may want to "
              "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
              "(assuming you have a Redis configuration file set) in order to store users in "
              "the Redis configuration.")
SAVE_FAILED = ("ERR There was an error trying to save the ACLs. Please check the server logs "
               "for more information")
BOTH_USER_SOURCES = (
    "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
    "path is invalid. This setup is very likely to lead to configuration errors and security "
    "holes, please define either an ACL file or declare users directly in your redis.conf, but "
    "not both.")
BAD_USERNAME = "Usernames can't contain spaces or null characters"
NOPERM = {1: "NOPERM this user has no permissions to run the '%s' command",
          2: "NOPERM this user has no permissions to access one of the keys used as arguments",
          4: ("NOPERM this user has no permissions to access one of the channels used as "
              "arguments")}
DRYRUN = {1: "This user has no permissions to run the '%s' command",
          2: "This user has no permissions to access the '%s' key",
          4: "This user has no permissions to access the '%s' channel"}
SCRIPT_DENIED = {1: "ERR The user executing the script can't run this command or subcommand",
                 2: ("ERR The user executing the script can't access at least one of the keys "
                     "mentioned in the command arguments"),
                 4: ("ERR The user executing the script can't publish to the channel mentioned "
                     "in the command")}
EXEC_DENIED = {1: "no permission to execute the command or subcommand",
               2: "no permission to touch the specified keys",
               4: "no permission to access one of the channels used as arguments"}
EXEC_CHANGED = ("NOPERM ACLs rules changed between the moment the transaction was accumulated "
                "and the EXEC call. This command is no longer allowed for the following "
                "reason: %s")


def valid_username(name: bytes) -> bool:
    return b" " not in name and b"\0" not in name


def user_declaration_error(argv: list) -> Optional[str]:
    """A `user <name> <rules>...` line of the configuration file: Redis's error for
    its first bad rule, or None."""
    scratch = new_user(argv[1], False)
    try:
        rules = merge_selector_args(argv[2:])
    except RuleError as err:
        return "Error in user declaration '%s': %s" % (argv[0].decode("utf-8", "replace"), err)
    for i, rule in enumerate(rules):
        try:
            apply_rule(scratch, rule, False)
        except RuleError as err:
            # (Redis 7.0 names the line's word at the rule's index among the rules)
            return "Error in user declaration '%s': %s" % (
                argv[i].decode("utf-8", "replace"), err)
    return None


def may_stay_subscribed(user: User, client) -> bool:
    """Whether the user still allows every channel and pattern the client is
    subscribed to (a selector allowing each)."""
    for channels, is_pattern in ((client.channels, False), (client.shard_channels, False),
                                 (client.patterns, True)):
        for channel in channels:
            if not any(s.allows_channel(channel, is_pattern) for s in user.selectors):
                return False
    return True


class AclUsers:
    """The users of one engine and what the ACL keeps beside them."""

    def __init__(self) -> None:
        self.users: dict[bytes, User] = {}
        self.default = self._fresh_default()
        self.users[DEFAULT] = self.default
        self.all_channels_default = False       # acl-pubsub-default allchannels
        self.log = AclLog()
        self.denied = {"auth": 0, "cmd": 0, "key": 0, "channel": 0}
        self.aclfile: Optional[str] = None
        self.caller = None              # the client running an ACL command that changes users
        # called with the users whose rules changed or that are gone (deleted: True):
        # the hub refreshes its clients' flags, or disconnects them
        self.on_change: Callable[[list, bool], None] = lambda users, deleted: None

    @staticmethod
    def _fresh_default() -> User:
        user = User(DEFAULT)
        for rule in (b"on", b"nopass", b"~*", b"&*", b"+@all"):
            apply_rule(user, rule, False)
        return user

    # passwords and authentication

    def set_requirepass(self, password: Optional[bytes]) -> None:
        """requirepass is the default user's password (none: nopass)."""
        user = self.default
        apply_rule(user, b"resetpass", False)
        apply_rule(user, b">" + password if password is not None else b"nopass", False)

    def password_required(self) -> bool:
        """Whether a new connection must authenticate (the default user is not an
        enabled nopass user)."""
        return not (self.default.nopass and self.default.enabled)

    def authenticate(self, username: bytes, password: bytes) -> Optional[User]:
        """The user these credentials open, or None (unknown, off, wrong password)."""
        user = self.users.get(username)
        if user is None or not user.enabled:
            return None
        if user.nopass:
            return user
        digest = password_digest(password)
        matched = False
        for known in user.passwords:
            matched |= hmac.compare_digest(known, digest)
        return user if matched else None

    # refusals

    def refused(self, verdict: int, pos: int, record, argv: list, context: str,
                client) -> str:
        """A refusal of the check, counted (INFO) and logged (ACL LOG): the error text
        for where the command came from (context: toplevel, multi, lua, or exec for a
        queued command refused at EXEC)."""
        reason = REASONS[verdict]
        self.denied["cmd" if verdict == 1 else reason] += 1
        obj = record.name.encode() if verdict == 1 else argv[pos]
        self.log.add(reason, "multi" if context == "exec" else context, obj,
                     client.user.name, client.client_line())
        if context == "lua":
            return SCRIPT_DENIED[verdict]
        if context == "exec":
            return EXEC_CHANGED % EXEC_DENIED[verdict]
        return NOPERM[verdict] % record.name if verdict == 1 else NOPERM[verdict]

    def reset_denied(self) -> None:
        """CONFIG RESETSTAT: INFO's acl_access_denied_* start again from 0."""
        self.denied = dict.fromkeys(self.denied, 0)

    def auth_failed(self, username: bytes, context: str, client_info: bytes) -> None:
        self.denied["auth"] += 1
        self.log.add("auth", context, b"AUTH", username, client_info)

    # users

    def setuser(self, name: bytes, rules: list) -> User:
        """ACL SETUSER: the user created or changed (all rules or none); RuleError."""
        if not valid_username(name):
            raise RuleError(BAD_USERNAME)
        rules = merge_selector_args(rules)
        user = self.users.get(name)
        created = user is None
        base = new_user(name, self.all_channels_default) if created else user
        if created:
            base.disabled = True
        changed = apply_rules(base, rules, self.all_channels_default)
        if created:
            self.users[name] = changed
            return changed
        assign(user, changed)
        self.on_change([user], False)
        return user

    def deluser(self, names: Iterable[bytes]) -> int:
        gone = []
        for name in names:
            user = self.users.pop(name, None)
            if user is not None and user not in gone:
                user.deleted = True
                gone.append(user)
        if gone:
            self.on_change(gone, True)
        return len(gone)

    def sorted_users(self) -> list:
        return [self.users[name] for name in sorted(self.users)]

    def list_lines(self) -> list:
        return [b"user " + user.name + b" " + describe_user(user) for user in self.sorted_users()]

    # users from the config file and the aclfile

    def load_lines(self, lines: list, where: Callable[[int], str]) -> dict:
        """Users from `user <name> <rules...>` lines ((number, words) pairs): name ->
        User; raises RuleError holding every line's error in Redis's words (`where(n)`
        naming line n), and its closing warning."""
        users: dict[bytes, User] = {}
        errors = []
        for number, argv in lines:
            if argv[0] != b"user" or len(argv) < 2:
                errors.append("%s should start with user keyword followed by the username. "
                              % where(number))
                continue
            name = argv[1]
            if not valid_username(name):
                errors.append("'%s: username '%s' contains invalid characters. "
                              % (where(number), name.decode("utf-8", "replace")))
                continue
            if name in users:
                errors.append("WARNING: Duplicate user '%s' found on line %d. "
                              % (name.decode("utf-8", "replace"), number))
                continue
            user = users[name] = new_user(name, self.all_channels_default)
            user.disabled = True
            try:
                rules = merge_selector_args(argv[2:])
            except RuleError:
                errors.append("%s: Unmatched parenthesis in selector definition."
                              % where(number))
                continue
            first_error = True
            for rule in rules:
                try:
                    apply_rule(user, rule.strip(b"\t\r\n"), self.all_channels_default)
                except RuleError as err:
                    if str(err) == UNKNOWN_NAME:
                        errors.append("%s: Error in applying operation '%s': %s. "
                                      % (where(number), rule.decode("utf-8", "replace"), err))
                    elif first_error:
                        errors.append("%s: %s. " % (where(number), err))
                        first_error = False
        if errors:
            errors.append("WARNING: ACL errors detected, no change to the previously active "
                          "ACL rules was performed")
            raise RuleError("".join(errors))
        return users

    def replace_users(self, users: dict) -> None:
        """The users become `users` (a default user kept, made fresh if absent); the
        clients of users that are gone or changed are disconnected, as Redis's ACL LOAD."""
        fresh = users.pop(DEFAULT, None) or self._fresh_default()
        old = [u for name, u in self.users.items() if name != DEFAULT]
        assign(self.default, fresh)
        self.users = {DEFAULT: self.default, **users}
        for user in old:
            user.deleted = True
        if old:
            self.on_change(old, True)
        self.on_change([self.default], False)

    def configure(self, aclfile: Optional[str], user_lines: list, pubsub_default: str,
                  log_max_len: int) -> None:
        """The server's start: users from the aclfile or from the configuration's
        `user` lines (not both, as Redis); raises RuleError with Redis's reason."""
        self.all_channels_default = pubsub_default == "allchannels"
        self.log.max_len = log_max_len
        self.aclfile = aclfile or None
        if self.aclfile is not None and user_lines:
            raise RuleError(BOTH_USER_SOURCES)
        if user_lines:
            self.replace_users(self.load_lines(list(enumerate(user_lines, 1)),
                                               lambda n: "user line %d" % n))
        elif self.aclfile is not None:
            try:
                self.load_aclfile()
            except RuleError as err:
                raise RuleError("Aborting Redis startup because of ACL errors: %s" % err) \
                    from None

    def load_aclfile(self) -> None:
        """ACL LOAD (and the server's start): all users of the aclfile or, on any
        error, none (raises RuleError with Redis's text, OSError's included)."""
        path = self.aclfile
        try:
            with open(path, "rb") as f:
                content = f.read()
        except OSError as exc:
            raise RuleError("Error loading ACLs, opening file '%s': %s"
                            % (path, os.strerror(exc.errno or 2))) from None
        lines = []
        for number, raw in enumerate(content.split(b"\n"), 1):
            line = raw.strip(b" \t\r\n")
            if line:        # (words: no quoting, no comments, as Redis 7.0 reads it)
                lines.append((number, line.split(b" ")))
        self.replace_users(self.load_lines(lines, lambda n: "%s:%d" % (path, n)))

    def save_aclfile(self) -> None:
        """ACL SAVE: every user as a line of the aclfile, written atomically; raises
        OSError."""
        write_atomically(self.aclfile, b"".join(line + b"\n" for line in self.list_lines()))
