"""ACL rules: how ACL SETUSER's rules change a user (and its selectors), and how a
user is written back as rules (ACL LIST, the aclfile) and as ACL GETUSER's reply:
Redis's rule syntax and error texts (7.0's), its command rules kept in the order
they were written (7.2's, which redis-py's tests expect; 7.0 recomputed them from the
bitmap, the same permissions in other words)."""
from __future__ import annotations

import copy
import hashlib
from typing import Optional

from engine.api.acl.command_ids import (CATEGORIES, FUTURE_ID, ID_BY_NAME, by_name,
                                        category_members, ids_with_subcommands)
from engine.api.acl.permissions import READ as KEY_READ, WRITE as KEY_WRITE, Selector, User
from engine.resp.reply import SetReply

KEY_ALL = KEY_READ | KEY_WRITE
SANITIZE, SKIP_SANITIZE = 1, 2

UNKNOWN_NAME = "Unknown command or category name in ACL"
SYNTAX = "Syntax error"
AFTER_ALL_KEYS = ("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid "
                  "and does not have any effect. Try 'resetkeys' to start with an empty list "
                  "of patterns")
AFTER_ALL_CHANNELS = ("Adding a pattern after the * pattern (or the 'allchannels' flag) is not "
                      "valid and does not have any effect. Try 'resetchannels' to start with an "
                      "empty list of channels")
NO_SUCH_PASSWORD = "The password you are trying to remove from the user does not exist"
BAD_HASH = ("The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters")
FIRST_ARG_OF_SUBCOMMAND = "Allowing first-arg of a subcommand is not supported"


class RuleError(ValueError):
    """A rule that cannot apply: str() is Redis's reason."""


def password_digest(password: bytes) -> str:
    """The SHA-256 hex digest Redis keeps of a password."""
    return hashlib.sha256(password).hexdigest()


# -- applying rules ---------------------------------------------------------------------

def new_user(name: bytes, all_channels: bool) -> User:
    """A user as ACL SETUSER creates it: off, no password, no command, no key; every
    channel when acl-pubsub-default is allchannels."""
    user = User(name)
    user.selectors[0].all_channels = all_channels
    return user


def merge_selector_args(rules: list) -> list:
    """The rules with a selector written over several arguments ("(+get", "~k)") joined;
    raises RuleError (its text whole) for one that never closes."""
    out: list = []
    opening: Optional[list] = None
    for rule in rules:
        if opening is None:
            if rule.startswith(b"(") and not rule.endswith(b")"):
                opening = [rule]
            else:
                out.append(rule)
        else:
            opening.append(rule)
            if rule.endswith(b")"):
                out.append(b" ".join(opening))
                opening = None
    if opening is not None:
        raise RuleError("Unmatched parenthesis in acl selector starting at '%s'."
                        % opening[0].decode("utf-8", "replace"))
    return out


def apply_rules(user: User, rules: list, all_channels_default: bool) -> User:
    """A copy of `user` with every rule applied (the user itself is untouched: a
    rule that fails leaves it as it was); raises RuleError naming the rule."""
    changed = copy_user(user)
    for rule in rules:
        try:
            apply_rule(changed, rule, all_channels_default)
        except RuleError as err:
            raise RuleError("Error in ACL SETUSER modifier '%s': %s"
                            % (rule.decode("utf-8", "replace"), err)) from None
    return changed


def copy_user(user: User) -> User:
    twin = User(user.name)
    assign(twin, user)
    return twin


def assign(target: User, source: User) -> None:
    """Makes `target` hold what `source` holds (clients keep their user object)."""
    target.enabled = source.enabled
    target.disabled = source.disabled
    target.nopass = source.nopass
    target.sanitize_payload = source.sanitize_payload
    target.passwords = list(source.passwords)
    target.selectors = [copy_selector(s) for s in source.selectors]


def copy_selector(selector: Selector) -> Selector:
    twin = Selector()
    twin.bits = bytearray(selector.bits)
    twin.all_commands = selector.all_commands
    twin.all_keys = selector.all_keys
    twin.all_channels = selector.all_channels
    twin.key_patterns = list(selector.key_patterns)
    twin.pattern_at = dict(selector.pattern_at)
    twin.channels = dict(selector.channels)
    twin.first_args = copy.deepcopy(selector.first_args)
    twin.command_rules = list(selector.command_rules)
    return twin


def apply_rule(user: User, rule: bytes, all_channels_default: bool) -> None:
    """One rule of the user (flags, passwords, selectors) or of its root selector."""
    word = rule.lower()
    if word == b"on":
        user.enabled, user.disabled = True, False
    elif word == b"off":
        user.enabled, user.disabled = False, True
    elif word == b"skip-sanitize-payload":
        user.sanitize_payload = SKIP_SANITIZE
    elif word == b"sanitize-payload":
        user.sanitize_payload = SANITIZE
    elif word == b"nopass":
        user.nopass = True
        user.passwords = []
    elif word == b"resetpass":
        user.nopass = False
        user.passwords = []
    elif rule[:1] == b">":
        digest = password_digest(rule[1:])
        if digest not in user.passwords:
            user.passwords.append(digest)
        user.nopass = False
    elif rule[:1] == b"#":
        digest = _valid_hash(rule[1:])
        if digest not in user.passwords:
            user.passwords.append(digest)
        user.nopass = False
    elif rule[:1] == b"<":
        _remove_password(user, password_digest(rule[1:]))
    elif rule[:1] == b"!":
        _remove_password(user, _valid_hash(rule[1:]))
    elif rule[:1] == b"(" and rule[-1:] == b")":
        selector = Selector()
        selector.all_channels = all_channels_default
        for part in rule[1:-1].split():
            apply_selector_rule(selector, part)
        user.selectors.append(selector)
    elif word == b"clearselectors":
        del user.selectors[1:]
    elif word == b"reset":
        for step in (b"resetpass", b"resetkeys", b"resetchannels"):
            apply_rule(user, step, all_channels_default)
        if all_channels_default:
            apply_rule(user, b"allchannels", all_channels_default)
        for step in (b"off", b"sanitize-payload", b"clearselectors", b"-@all"):
            apply_rule(user, step, all_channels_default)
    else:
        apply_selector_rule(user.selectors[0], rule)


def _valid_hash(text: bytes) -> str:
    if len(text) != 64 or any(c not in b"0123456789abcdef" for c in text):
        raise RuleError(BAD_HASH)
    return text.decode()


def _remove_password(user: User, digest: str) -> None:
    if digest not in user.passwords:
        raise RuleError(NO_SUCH_PASSWORD)
    user.passwords.remove(digest)


def apply_selector_rule(selector: Selector, rule: bytes) -> None:
    """One rule of a selector: keys, channels, commands."""
    word = rule.lower()
    if word == b"allkeys" or rule == b"~*":
        selector.all_keys = True
        selector.key_patterns, selector.pattern_at = [], {}
    elif word == b"resetkeys":
        selector.all_keys = False
        selector.key_patterns, selector.pattern_at = [], {}
    elif word == b"allchannels" or rule == b"&*":
        selector.all_channels = True
        selector.channels = {}
    elif word == b"resetchannels":
        selector.all_channels = False
        selector.channels = {}
    elif word in (b"allcommands", b"+@all"):
        selector.bits[:] = b"\xff" * len(selector.bits)
        selector.all_commands = True
        selector.first_args = {}
        selector.command_rules = []
    elif word in (b"nocommands", b"-@all"):
        selector.bits[:] = bytes(len(selector.bits))
        selector.all_commands = False
        selector.first_args = {}
        selector.command_rules = []
    elif rule[:1] in (b"~", b"%"):
        _add_key_pattern(selector, rule)
    elif rule[:1] == b"&":
        if selector.all_channels:
            raise RuleError(AFTER_ALL_CHANNELS)
        selector.channels[rule[1:]] = None
    elif rule[:2] in (b"+@", b"-@"):
        allow = rule[:1] == b"+"
        category = rule[2:].lower().decode("utf-8", "replace")
        if category not in CATEGORIES:
            raise RuleError(UNKNOWN_NAME)
        if not allow:
            selector.all_commands = False
        for record in category_members(category):
            set_command(selector, record, allow)
        update_command_rules(selector, "@" + category, allow)
    elif rule[:1] in (b"+", b"-"):
        _command_rule(selector, rule)
    else:
        raise RuleError(SYNTAX)


def _add_key_pattern(selector: Selector, rule: bytes) -> None:
    if selector.all_keys:
        raise RuleError(AFTER_ALL_KEYS)
    if rule[:1] == b"~":
        flags, pattern = KEY_ALL, rule[1:]
    else:
        flags = 0
        offset = 1
        while offset < len(rule):        # (no `~`: Redis takes an empty pattern)
            c = rule[offset:offset + 1].upper()
            offset += 1
            if c == b"R" and not flags & KEY_READ:
                flags |= KEY_READ
            elif c == b"W" and not flags & KEY_WRITE:
                flags |= KEY_WRITE
            elif c == b"~":
                break
            else:
                raise RuleError(SYNTAX)
        if not flags:
            raise RuleError(SYNTAX)
        pattern = rule[offset:]
    if pattern == b"*" and flags == KEY_ALL:
        selector.all_keys = True
        selector.key_patterns, selector.pattern_at = [], {}
        return
    at = selector.pattern_at.get(pattern)
    if at is not None:                  # the same pattern again: its access widens
        selector.key_patterns[at] = (selector.key_patterns[at][0] | flags, pattern)
        return
    selector.pattern_at[pattern] = len(selector.key_patterns)
    selector.key_patterns.append((flags, pattern))


def _command_rule(selector: Selector, rule: bytes) -> None:
    allow = rule[:1] == b"+"
    name = rule[1:].decode("utf-8", "replace").lower()
    if not allow:
        selector.all_commands = False
    top, sep, sub = name.partition("|")
    container = by_name(top)
    if container is None or (sep and not allow and container.subcommands is None):
        raise RuleError(UNKNOWN_NAME)
    update_command_rules(selector, name, allow)
    if not sep:
        set_command(selector, container, allow)
        return
    if container.subcommands is not None:
        record = by_name(name)
        if record is None or "|" in sub:
            raise RuleError(UNKNOWN_NAME if record is None and "|" not in sub
                            else FIRST_ARG_OF_SUBCOMMAND)
        set_command(selector, record, allow)
        return
    # a command without subcommands: its first argument (SELECT 0)
    if not sub or "|" in sub:
        raise RuleError(UNKNOWN_NAME)
    cmd_id = ID_BY_NAME[container.name]
    if not selector.allows_command(cmd_id):
        allowed = selector.first_args.setdefault(cmd_id, [])
        if sub.encode() not in allowed:
            allowed.append(sub.encode())


def update_command_rules(selector: Selector, rule: str, allow: bool) -> None:
    """The rule goes last, written once: an earlier rule of the same command (or
    category), or of one of its subcommands or first arguments, goes."""
    nested = rule + "|"
    selector.command_rules = [r for r in selector.command_rules
                              if r[1:] != rule and not r[1:].startswith(nested)]
    selector.command_rules.append(("+" if allow else "-") + rule)


def set_command(selector: Selector, record, allow: bool) -> None:
    """A command's bit (and its subcommands') on or off; its first arguments go."""
    bits = selector.bits
    for cmd_id in ids_with_subcommands(record):
        if allow:
            bits[cmd_id >> 3] |= 1 << (cmd_id & 7)
        else:
            bits[cmd_id >> 3] &= ~(1 << (cmd_id & 7)) & 0xFF
        selector.first_args.pop(cmd_id, None)


# -- describing -------------------------------------------------------------------------

def _bit(selector: Selector, cmd_id: int) -> bool:
    return bool(selector.bits[cmd_id >> 3] >> (cmd_id & 7) & 1)


def command_rules(selector: Selector) -> str:
    """The command part of a selector's rules, as Redis 7.2+ writes it: +@all or -@all
    (whether future commands are allowed), then the command and category rules applied
    since, in order, each only where it was last written (update_command_rules)."""
    return " ".join(["-@all" if not _bit(selector, FUTURE_ID) else "+@all"]
                    + selector.command_rules)


def key_rules(selector: Selector) -> list:
    if selector.all_keys:
        return ["~*"]
    return [_key_rule(flags, pattern) for flags, pattern in selector.key_patterns]


def _key_rule(flags: int, pattern: bytes) -> str:
    prefix = "~" if flags == KEY_ALL else ("%R~" if flags == KEY_READ else "%W~")
    return prefix + pattern.decode("utf-8", "surrogateescape")


def channel_rules(selector: Selector) -> list:
    if selector.all_channels:
        return ["&*"]
    return ["&" + c.decode("utf-8", "surrogateescape") for c in selector.channels]


def describe_selector(selector: Selector) -> str:
    parts = key_rules(selector)
    if not selector.all_channels:
        parts.append("resetchannels")
    parts += channel_rules(selector)
    parts.append(command_rules(selector))
    return " ".join(parts)


def user_flags(user: User) -> list:
    flags = []
    if user.enabled:
        flags.append("on")
    if user.disabled:
        flags.append("off")
    if user.nopass:
        flags.append("nopass")
    if user.sanitize_payload == SKIP_SANITIZE:
        flags.append("skip-sanitize-payload")
    elif user.sanitize_payload == SANITIZE:
        flags.append("sanitize-payload")
    return flags


def describe_user(user: User) -> bytes:
    """The user as rules (ACL LIST without "user <name> ", the aclfile)."""
    parts = user_flags(user) + ["#" + p for p in user.passwords]
    text = " ".join(parts + [describe_selector(user.selectors[0])])
    for selector in user.selectors[1:]:
        text += " (%s)" % describe_selector(selector)
    return text.encode("utf-8", "surrogateescape")


def getuser_reply(user: User) -> dict:
    """ACL GETUSER's map."""
    root = user.selectors[0]
    return {
        b"flags": SetReply(f.encode() for f in user_flags(user)),
        b"passwords": [p.encode() for p in user.passwords],
        b"commands": command_rules(root).encode(),
        b"keys": " ".join(key_rules(root)).encode("utf-8", "surrogateescape"),
        b"channels": " ".join(channel_rules(root)).encode("utf-8", "surrogateescape"),
        b"selectors": [{b"commands": command_rules(s).encode(),
                        b"keys": " ".join(key_rules(s)).encode("utf-8", "surrogateescape"),
                        b"channels": " ".join(channel_rules(s)).encode("utf-8", "surrogateescape")}
                       for s in user.selectors[1:]],
    }

