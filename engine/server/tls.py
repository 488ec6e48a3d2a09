"""The TLS context of the `tls-port` listener, built from the `tls-*` directives as
redis-server 7.0 builds its own: the certificate and key (`tls-key-file-pass` for an
encrypted key), the CAs that sign client certificates, `tls-auth-clients`, the protocol
versions, the TLS 1.2 ciphers and TLS 1.3 ciphersuites, the server's cipher preference,
the session cache and Diffie-Hellman parameters.

A context is built whole and replaces the old one only once it is good: the listener
takes a new context for new connections (CONFIG SET of any `tls-*` directive, even to
the same value, reloads the files), connections already open keep theirs.

Python's ssl module has no call for TLS 1.3 ciphersuites nor for the session cache's
mode, size and timeout: those few go to OpenSSL directly, on the context's own SSL_CTX
(the libssl Python's ssl module is linked with, checked by reading the context's
options back through it).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import ssl
from typing import Any, Optional

# Redis's names of the protocol versions (any case), in order.
PROTOCOLS = {"tlsv1": ssl.TLSVersion.TLSv1, "tlsv1.1": ssl.TLSVersion.TLSv1_1,
             "tlsv1.2": ssl.TLSVersion.TLSv1_2, "tlsv1.3": ssl.TLSVersion.TLSv1_3}
DEFAULT_PROTOCOLS = ("tlsv1.2", "tlsv1.3")
_NO_PROTOCOL = {"tlsv1": ssl.OP_NO_TLSv1, "tlsv1.1": ssl.OP_NO_TLSv1_1,
                "tlsv1.2": ssl.OP_NO_TLSv1_2, "tlsv1.3": ssl.OP_NO_TLSv1_3}
_CLIENT_CERTS = {"no": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "yes": ssl.CERT_REQUIRED}
_ERR_SYSTEM_FLAG = 0x80000000       # OpenSSL 3's code of an error of the C library
# OpenSSL's numbers of the libraries whose failures ssl.SSLError names (openssl/err.h):
# the code of an error is the library's number << 23 | the reason (the SSLError's errno).
_LIBRARIES = {"RSA": 4, "DH": 5, "EVP": 6, "BUF": 7, "OBJ": 8, "PEM": 9, "X509": 11,
              "ASN1": 13, "SSL": 20, "X509V3": 34, "OSSL_STORE": 44, "DECODER": 60}

# SSL_CTX_ctrl commands and the session cache's modes (openssl/ssl.h).
_SET_SESS_CACHE_SIZE, _SET_SESS_CACHE_MODE = 42, 44
_SESS_CACHE_OFF, _SESS_CACHE_SERVER = 0, 2

FAILED_TO_CONFIGURE = "Failed to configure TLS. Check logs for more info."
UNABLE_TO_UPDATE = "Unable to update TLS configuration. Check server logs."


class TlsConfigError(Exception):
    """The `tls-*` directives do not make a context; str() is the line for the log,
    as redis-server words it."""


def build_context(cfg: Any) -> ssl.SSLContext:
    """A server context from the `tls-*` values of `cfg` (a ServerConfig); relative
    paths are the working directory's. Raises TlsConfigError."""
    auth_clients = cfg.tls_auth_clients
    if not cfg.tls_cert_file:
        raise TlsConfigError("No tls-cert-file configured!")
    if not cfg.tls_key_file:
        raise TlsConfigError("No tls-key-file configured!")
    if auth_clients != "no" and not (cfg.tls_ca_cert_file or cfg.tls_ca_cert_dir):
        raise TlsConfigError("Either tls-ca-cert-file or tls-ca-cert-dir must be specified "
                             "when tls-cluster, tls-replication or tls-auth-clients are enabled!")
    protocols = parse_protocols(cfg.tls_protocols)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_SINGLE_DH_USE
    ctx.minimum_version = PROTOCOLS[protocols[0]]
    ctx.maximum_version = PROTOCOLS[protocols[-1]]
    for name in PROTOCOLS:
        if PROTOCOLS[protocols[0]] < PROTOCOLS[name] < PROTOCOLS[protocols[-1]] \
                and name not in protocols:
            ctx.options |= _NO_PROTOCOL[name]
    if cfg.tls_prefer_server_ciphers:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    openssl = _OpenSSL.of(ctx)
    _session_cache(ctx, openssl, cfg)
    try:
        # a callable even without a passphrase: OpenSSL would ask the terminal for one
        passphrase = os.fsencode(cfg.tls_key_file_pass)
        ctx.load_cert_chain(cfg.tls_cert_file, cfg.tls_key_file, lambda: passphrase)
    except OSError as exc:
        failed = "private key" if _is_key_failure(exc, cfg) else "certificate"
        path = cfg.tls_key_file if failed == "private key" else cfg.tls_cert_file
        raise TlsConfigError(f"Failed to load {failed}: {path}: {_reason(exc)}") from None
    if cfg.tls_ca_cert_file or cfg.tls_ca_cert_dir:
        try:
            ctx.load_verify_locations(cfg.tls_ca_cert_file or None, cfg.tls_ca_cert_dir or None)
        except OSError as exc:
            raise TlsConfigError("Failed to configure CA certificate(s) file/directory: "
                                 + _reason(exc)) from None
    ctx.verify_mode = _CLIENT_CERTS[auth_clients]
    if cfg.tls_dh_params_file:
        try:
            ctx.load_dh_params(cfg.tls_dh_params_file)
        except OSError as exc:
            raise TlsConfigError(f"Failed to load {cfg.tls_dh_params_file}: "
                                 f"{exc.strerror or _reason(exc)}") from None
    if cfg.tls_ciphers:
        try:
            ctx.set_ciphers(cfg.tls_ciphers)
        except ssl.SSLError:
            raise TlsConfigError(f"Failed to configure ciphers: {cfg.tls_ciphers}") from None
    if cfg.tls_ciphersuites and not openssl.set_ciphersuites(cfg.tls_ciphersuites):
        raise TlsConfigError(f"Failed to configure ciphersuites: {cfg.tls_ciphersuites}")
    return ctx


def parse_protocols(text: str) -> list[str]:
    """The versions `tls-protocols` names, oldest first (its default when empty)."""
    words = [word.lower() for word in text.split(" ") if word]
    for word in words:
        if word not in PROTOCOLS:
            raise TlsConfigError("Invalid tls-protocols specified. Use a combination of "
                                 "'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
    chosen = set(words) or set(DEFAULT_PROTOCOLS)
    return [name for name in PROTOCOLS if name in chosen]


def _session_cache(ctx: ssl.SSLContext, openssl: "_OpenSSL", cfg: Any) -> None:
    if cfg.tls_session_caching:
        openssl.ctrl(_SET_SESS_CACHE_MODE, _SESS_CACHE_SERVER)
        openssl.ctrl(_SET_SESS_CACHE_SIZE, cfg.tls_session_cache_size)
        openssl.set_timeout(cfg.tls_session_cache_timeout)
        openssl.set_session_id_context(b"redis")
    else:       # and no tickets, which would resume sessions without the cache
        openssl.ctrl(_SET_SESS_CACHE_MODE, _SESS_CACHE_OFF)
        ctx.options |= ssl.OP_NO_TICKET


def _is_key_failure(exc: OSError, cfg: Any) -> bool:
    """Whether load_cert_chain failed on the key: the certificate alone loads."""
    if isinstance(exc, ssl.SSLError) and exc.reason == "KEY_VALUES_MISMATCH":
        return True
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_verify_locations(cfg.tls_cert_file)
    except (OSError, ValueError):
        return False
    return True


def _reason(exc: OSError) -> str:
    """OpenSSL's text of a failure, as its `ERR_error_string` words it (Redis logs that)."""
    if not isinstance(exc, ssl.SSLError) and exc.errno:
        return (f"error:{_ERR_SYSTEM_FLAG | exc.errno:08X}:system library::"
                f"{os.strerror(exc.errno)}")
    library = _LIBRARIES.get(getattr(exc, "library", None) or "")
    if library is not None and isinstance(exc.errno, int) and 0 < exc.errno < 1 << 23:
        return _OpenSSL.error_string(library << 23 | exc.errno)
    reason = getattr(exc, "reason", None)
    return reason.lower().replace("_", " ") if reason else str(exc)


class _OpenSSL:
    """The calls Python's ssl module lacks, on one context's SSL_CTX."""

    _lib: Optional[ctypes.CDLL] = None

    def __init__(self, lib: ctypes.CDLL, ssl_ctx: int) -> None:
        self.lib, self.ssl_ctx = lib, ssl_ctx

    @classmethod
    def of(cls, ctx: ssl.SSLContext) -> "_OpenSSL":
        lib = cls._library()
        # The SSL_CTX pointer follows the object header in CPython's PySSLContext.
        pointer = ctypes.c_void_p.from_address(id(ctx) + object.__basicsize__).value
        if not pointer or lib.SSL_CTX_get_options(pointer) != ctx.options:
            raise TlsConfigError("Failed to configure TLS: OpenSSL's context is out of reach")
        return cls(lib, pointer)

    @classmethod
    def _library(cls) -> ctypes.CDLL:
        if cls._lib is None:
            lib = ctypes.CDLL(ctypes.util.find_library("ssl") or "libssl.so.3")
            lib.SSL_CTX_get_options.restype = ctypes.c_uint64
            lib.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
            lib.SSL_CTX_set_ciphersuites.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.SSL_CTX_ctrl.restype = ctypes.c_long
            lib.SSL_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long,
                                         ctypes.c_void_p]
            lib.SSL_CTX_set_timeout.restype = ctypes.c_long
            lib.SSL_CTX_set_timeout.argtypes = [ctypes.c_void_p, ctypes.c_long]
            lib.SSL_CTX_set_session_id_context.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                           ctypes.c_uint]
            lib.ERR_clear_error.restype = None
            lib.ERR_error_string_n.restype = None
            lib.ERR_error_string_n.argtypes = [ctypes.c_ulong, ctypes.c_char_p, ctypes.c_size_t]
            cls._lib = lib
        return cls._lib

    @classmethod
    def error_string(cls, code: int) -> str:
        """OpenSSL's text of an error code ("error:05800074:x509 certificate routines::...")."""
        buffer = ctypes.create_string_buffer(256)
        cls._library().ERR_error_string_n(code, buffer, len(buffer))
        return buffer.value.decode("utf-8", "replace")

    def ctrl(self, command: int, value: int) -> None:
        self.lib.SSL_CTX_ctrl(self.ssl_ctx, command, value, None)

    def set_timeout(self, seconds: int) -> None:
        self.lib.SSL_CTX_set_timeout(self.ssl_ctx, seconds)

    def set_session_id_context(self, name: bytes) -> None:
        """Without one, OpenSSL refuses to resume a session of a verified client."""
        self.lib.SSL_CTX_set_session_id_context(self.ssl_ctx, name, len(name))

    def set_ciphersuites(self, suites: str) -> bool:
        if self.lib.SSL_CTX_set_ciphersuites(self.ssl_ctx, suites.encode()) == 1:
            return True
        self.lib.ERR_clear_error()      # leave no error for the ssl module to pick up
        return False
