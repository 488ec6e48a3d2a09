"""Error replies. The message of a ResponseError is exactly Redis's error text."""


class ResponseError(Exception):
    """A command failed; str(err) is the error reply a Redis client would see."""


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NO_SUCH_KEY = "ERR no such key"
INVALID_STREAM_ID = "ERR Invalid stream ID specified as stream command argument"


def wrong_arity(name: str) -> ResponseError:
    return ResponseError(f"ERR wrong number of arguments for '{name}' command")


def unknown_command(argv: list) -> ResponseError:
    name = argv[0].decode("utf-8", "replace")
    shown = " ".join(f"'{a.decode('utf-8', 'replace')[:128]}'" for a in argv[1:])
    return ResponseError(f"ERR unknown command '{name[:128]}', with args beginning with: {shown}"
                         + (" " if shown else ""))


def unknown_subcommand(container: bytes, sub: bytes) -> ResponseError:
    return ResponseError(
        f"ERR unknown subcommand '{sub.decode('utf-8', 'replace')[:128]}'. "
        f"Try {container.decode().upper()} HELP.")
