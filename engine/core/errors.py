"""Error replies. The message of a ResponseError is exactly Redis's error text."""


class ResponseError(Exception):
    """A command failed; str(err) is the error reply a Redis client would see."""


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
OOM = "OOM command not allowed when used memory > 'maxmemory'."
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NO_SUCH_KEY = "ERR no such key"
INVALID_STREAM_ID = "ERR Invalid stream ID specified as stream command argument"


class ArityError(ResponseError):
    """The command table's arity check refused the call (a script's redis.call says so
    in words of its own, unlike a command's own count of its arguments: HSET's pairs)."""


def wrong_arity(name: str, cls: type = ResponseError) -> ResponseError:
    return cls(f"ERR wrong number of arguments for '{name}' command")


def arity_refused(name: str) -> ArityError:
    """The error of the command table's arity check (dispatch)."""
    return wrong_arity(name, ArityError)


def arg_text(arg: bytes, limit: int = -1) -> str:
    """A client-supplied argument as Redis prints it into an error text: as a C string
    (up to its first NUL byte), at most `limit` bytes, the bytes themselves kept
    (surrogateescape: the server's reply encoder writes non-UTF-8 bytes back unchanged,
    as Redis does, instead of replacement characters)."""
    end = arg.find(b"\0")
    if end >= 0:
        arg = arg[:end]
    if limit >= 0:
        arg = arg[:limit]
    return arg.decode("utf-8", "surrogateescape")


def unknown_command(argv: list) -> ResponseError:
    # Redis quotes arguments until the quoted list reaches 128 bytes
    shown = b""
    for arg in argv[1:]:
        if len(shown) >= 128:
            break
        shown += b"'%s' " % arg.split(b"\0", 1)[0][:128 - len(shown)]
    return ResponseError(f"ERR unknown command '{arg_text(argv[0], 128)}', with args beginning "
                         f"with: {shown.decode('utf-8', 'surrogateescape')}")


def subcommand_syntax(container: bytes, sub: bytes) -> ResponseError:
    """A known subcommand with the wrong arguments, in Redis's words."""
    return ResponseError(f"ERR unknown subcommand or wrong number of arguments for "
                         f"'{arg_text(sub, 128)}'. Try {container.decode().upper()} HELP.")


def unknown_subcommand(container: bytes, sub: bytes) -> ResponseError:
    return ResponseError(f"ERR unknown subcommand '{arg_text(sub, 128)}'. "
                         f"Try {container.decode().upper()} HELP.")
