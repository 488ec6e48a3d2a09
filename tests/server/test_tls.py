"""TLS beside redis-server 7.0: the same certificates (tests/tls_certs.py) on both servers,
the same clients (redis-cli --tls, redis-py's rediss:// and ssl_* options, Python's ssl)
and the same outcome: which certificates are refused, which protocol versions are
spoken, sessions resumed or not, certificates reloaded by CONFIG SET (new connections
only), CONFIG GET and CONFIG SET's errors, the log lines of a start refused; then
hostile handshakes against sluice-server, which must log no traceback and go on."""
from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
import redis

import servers
from servers import (SERVER_KINDS, RedisServer, ServerDidNotStart, SluiceServer, free_port,
                     needs_redis, tls_server)
from tls_certs import TestCerts, make_certs

pytestmark = needs_redis


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> TestCerts:
    return make_certs(tmp_path_factory.mktemp("certs"))


def _ping(port: int, **options) -> bool:
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5, **options)
    try:
        return client.ping()
    finally:
        client.close()


def _refused(port: int, **options) -> bool:
    """Whether a TLS client is refused (handshake, or the server's alert on first use)."""
    try:
        _ping(port, **options)
    except redis.ConnectionError:
        return True
    return False


def _cli(port: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          timeout=20)


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_redis_cli_and_redis_py_over_tls(kind, certs):
    """redis-cli --tls with a client certificate, redis-py's rediss:// URL with its
    ssl_* query options and its ssl_* keyword options; the plain port beside it."""
    with tls_server(kind, certs) as srv:
        out = _cli(srv.tls_port, *certs.cli_args(), "SET", "k", "over tls")
        assert out.stdout == b"OK\n", out
        assert _cli(srv.tls_port, *certs.cli_args(), "GET", "k").stdout == b"over tls\n"
        url = (f"rediss://127.0.0.1:{srv.tls_port}/0?ssl_ca_certs={certs.ca}"
               f"&ssl_certfile={certs.client_cert}&ssl_keyfile={certs.client_key}")
        client = redis.Redis.from_url(url)
        assert client.get("k") == b"over tls"
        client.close()
        client = redis.Redis(port=srv.tls_port, **certs.client_options())
        assert client.xadd("s", {"f": "v"}) and client.xlen("s") == 1
        client.close()
        assert redis.Redis(port=srv.port).get("k") == b"over tls"


REFUSALS = {
    "client trusts another CA": lambda c: c.client_options(ca=c.other_ca),
    "no client certificate": lambda c: {"ssl": True, "ssl_ca_certs": str(c.ca)},
    "certificate of another CA": lambda c: c.client_options(cert=c.other_client_cert),
    "expired certificate": lambda c: c.client_options(cert=c.expired_cert),
}


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_certificates_refused_as_redis_refuses_them(kind, certs):
    """tls-auth-clients yes (the default): each bad case is refused, the good one
    passes, and the plain port is unaffected."""
    with tls_server(kind, certs) as srv:
        for case, options in REFUSALS.items():
            assert _refused(srv.tls_port, **options(certs)), case
        assert _ping(srv.tls_port, **certs.client_options())
        assert _ping(srv.port)


@pytest.mark.parametrize("kind", SERVER_KINDS)
@pytest.mark.parametrize("auth_clients", ["optional", "no"])
def test_client_certificate_optional_or_not_asked(kind, auth_clients, certs):
    """optional: no certificate is fine, a bad one is refused; no: none is asked for."""
    with tls_server(kind, certs, ["--tls-auth-clients", auth_clients]) as srv:
        assert _ping(srv.tls_port, ssl=True, ssl_ca_certs=str(certs.ca))
        assert _ping(srv.tls_port, **certs.client_options())
        bad = certs.client_options(cert=certs.expired_cert)
        assert _refused(srv.tls_port, **bad) == (auth_clients == "optional")


def _version(port: int, certs: TestCerts, version: ssl.TLSVersion) -> str | None:
    """The protocol a client limited to `version` speaks with the server (None: refused)."""
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
    ctx.minimum_version = ctx.maximum_version = version
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"PING\r\n")
            assert tls.recv(100) == b"+PONG\r\n"
            return tls.version()
    except (ssl.SSLError, ConnectionError):
        return None


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_protocols_as_tls_protocols_says(kind, certs):
    with tls_server(kind, certs) as srv:      # the default: TLS 1.2 and 1.3
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
        admin = redis.Redis(port=srv.port)
        assert admin.config_set("tls-protocols", "TLSv1.2")
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_3) is None
        assert admin.config_set("tls-protocols", "tlsv1.3")
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_2) is None
        assert _version(srv.tls_port, certs, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
        assert admin.config_get("tls-protocols") == {"tls-protocols": "tlsv1.3"}
        # TLS 1.3's suites and 1.2's ciphers are the server's to choose among the client's
        assert admin.config_set("tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256")
        ctx = ssl.create_default_context(cafile=str(certs.ca))
        ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
        with socket.create_connection(("127.0.0.1", srv.tls_port), timeout=5) as raw, \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.cipher()[0] == "TLS_CHACHA20_POLY1305_SHA256"
        admin.close()


def _resumed(port: int, certs: TestCerts, version: ssl.TLSVersion) -> bool:
    """Whether a second connection resumes the first one's session (a refusal of the
    attempt counts as no: redis-server 7.0 answers one with an alert)."""
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
    ctx.maximum_version = version
    session = None
    try:
        for _ in range(2):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                    ctx.wrap_socket(raw, server_hostname="127.0.0.1", session=session) as tls:
                tls.sendall(b"PING\r\n")
                tls.recv(100)
                reused, session = tls.session_reused, tls.session
    except ssl.SSLError:
        return False
    return reused


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_session_caching(kind, certs):
    versions = (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)
    with tls_server(kind, certs) as srv:
        assert [_resumed(srv.tls_port, certs, version) for version in versions] == [True, True]
        assert redis.Redis(port=srv.port).config_set("tls-session-caching", "no")
        assert [_resumed(srv.tls_port, certs, version) for version in versions] == [False, False]


def _serves_cert_of(port: int, certs: TestCerts, ca: Path) -> bool:
    return not _refused(port, **certs.client_options(ca=ca))


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_certificate_reloaded_by_config_set(kind, certs, tmp_path):
    """New connections get the new certificate, an open connection keeps going; CONFIG
    SET of the same path reloads a file changed in place."""
    cert, key = tmp_path / "live.crt", tmp_path / "live.key"
    shutil.copy(certs.server_cert, cert)
    shutil.copy(certs.server_key, key)
    with tls_server(kind, certs, ["--tls-cert-file", str(cert), "--tls-key-file", str(key)],
                    workdir=tmp_path) as srv:
        admin = redis.Redis(port=srv.port)
        open_client = redis.Redis(port=srv.tls_port, **certs.client_options())
        open_client.set("before", "1")
        assert _serves_cert_of(srv.tls_port, certs, certs.ca)
        assert admin.config_set("tls-cert-file", str(certs.other_server_cert))
        assert _serves_cert_of(srv.tls_port, certs, certs.other_ca)
        assert not _serves_cert_of(srv.tls_port, certs, certs.ca)
        assert open_client.get("before") == b"1"
        # the same path, the file replaced: read again
        assert admin.config_set("tls-cert-file", str(cert))
        assert _serves_cert_of(srv.tls_port, certs, certs.ca)
        shutil.copy(certs.other_server_cert, cert)
        assert admin.config_set("tls-cert-file", str(cert))
        assert _serves_cert_of(srv.tls_port, certs, certs.other_ca)
        assert open_client.get("before") == b"1"
        open_client.close()
        admin.close()


CONFIG_SETS = [
    ("tls-cert-file", "nope.crt"), ("tls-key-file", "nope.key"), ("tls-ca-cert-file", "nope"),
    ("tls-ciphers", "BOGUS"), ("tls-ciphersuites", "BOGUS"), ("tls-protocols", "TLSv9"),
    ("tls-protocols", "TLSv1.2 TLSv1.3"), ("tls-auth-clients", "maybe"),
    ("tls-auth-clients", "optional"), ("tls-session-cache-size", "-1"),
    ("tls-session-cache-timeout", "0"), ("tls-session-cache-size", "100"),
    ("tls-dh-params-file", "nope"), ("tls-port", "70000"), ("tls-prefer-server-ciphers", "yes"),
    ("tls-session-caching", "no"), ("tls-ciphers", "HIGH"),
    ("tls-ciphersuites", "TLS_AES_128_GCM_SHA256"), ("tls-key-file-pass", "unused"),
    ("tls-cert-file", "{client_cert}"),     # a certificate that is not the key's
]

OUR_DIRECTIVES = ["tls-port", "tls-cert-file", "tls-key-file", "tls-key-file-pass",
                  "tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass",
                  "tls-dh-params-file", "tls-ca-cert-file", "tls-ca-cert-dir", "tls-protocols",
                  "tls-ciphers", "tls-ciphersuites", "tls-auth-clients",
                  "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
                  "tls-session-cache-timeout"]


def _config_replies(srv, certs: TestCerts) -> tuple[list, dict]:
    admin = redis.Redis(port=srv.port)
    replies = []
    for name, value in CONFIG_SETS:
        try:
            replies.append(admin.config_set(name, value.format(client_cert=certs.client_cert)))
        except redis.ResponseError as exc:
            replies.append(str(exc))
    got = admin.config_get("tls-*")
    admin.close()
    values = {name: got.get(name) for name in OUR_DIRECTIVES}
    values["tls-port"] = int(values["tls-port"]) - srv.tls_port
    return replies, values


def test_config_set_and_get_as_redis(certs):
    """Every CONFIG SET's reply, and CONFIG GET tls-* after them, as redis-server's;
    the failures leave the TLS port serving with the settings before them."""
    seen = {}
    for kind in SERVER_KINDS:
        with tls_server(kind, certs) as srv:
            seen[kind] = _config_replies(srv, certs)
            assert _ping(srv.tls_port, **certs.client_options())
    assert seen["sluice"] == seen["redis"]
    assert "Unable to update TLS configuration. Check server logs." in seen["sluice"][0][0]


def _log_lines(text: str) -> list:
    """The warning lines of a log, without their pid and time stamp."""
    return [m.group(1) for m in re.finditer(r"^\d+:[A-Z] .+? # (.*)$", text, re.M)]


STARTS = {
    "no certificate": [],
    "no key": ["--tls-cert-file", "{server_cert}"],
    "no CA with tls-auth-clients yes": ["--tls-cert-file", "{server_cert}",
                                        "--tls-key-file", "{server_key}"],
    "certificate missing": ["--tls-cert-file", "nope.crt", "--tls-key-file", "{server_key}",
                            "--tls-auth-clients", "no"],
    "key missing": ["--tls-cert-file", "{server_cert}", "--tls-key-file", "nope.key",
                    "--tls-auth-clients", "no"],
    "key of another certificate": ["--tls-cert-file", "{server_cert}", "--tls-key-file",
                                   "{client_key}", "--tls-auth-clients", "no"],
    "CA missing": ["--tls-cert-file", "{server_cert}", "--tls-key-file", "{server_key}",
                   "--tls-ca-cert-file", "nope"],
    "bad protocols": ["--tls-cert-file", "{server_cert}", "--tls-key-file", "{server_key}",
                      "--tls-auth-clients", "no", "--tls-protocols", "SSLv3"],
    "bad ciphers": ["--tls-cert-file", "{server_cert}", "--tls-key-file", "{server_key}",
                    "--tls-auth-clients", "no", "--tls-ciphers", "BOGUS"],
}


@pytest.mark.parametrize("case", STARTS)
def test_a_start_refused_logs_as_redis(case, certs, tmp_path):
    args = [a.format(server_cert=certs.server_cert, server_key=certs.server_key,
                     client_key=certs.client_key) for a in STARTS[case]]
    args = ["--tls-port", str(free_port()), *args]
    redis_out = RedisServer(["--save", "", *args], workdir=tmp_path).try_start()
    assert redis_out is not None
    with pytest.raises(ServerDidNotStart) as failure:
        SluiceServer(["--save", "", *args], workdir=tmp_path, port=free_port()).start()
    ours = [line for line in _log_lines(str(failure.value)) if "TLS" in line or "tls" in line
            or "Failed" in line]
    theirs = [line for line in _log_lines(redis_out) if "TLS" in line or "tls" in line
              or "Failed" in line]
    assert ours == theirs


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_tls_only_with_port_0(kind, certs, tmp_path):
    """`port 0`: no plain TCP listener, the TLS one serves (and the unix socket)."""
    tls_port = free_port()
    args = ["--save", "", "--appendonly", "no", *certs.server_args()]
    if kind == "redis":
        srv = RedisServer(["--port", "0", *args], workdir=tmp_path, port=tls_port,
                          port_option="--tls-port", client_options=certs.client_options())
    else:
        srv = SluiceServer([*args, "--tls-port", str(tls_port), "--unixsocket",
                            str(tmp_path / "s.sock")], port=0, workdir=tmp_path)
    with srv:
        assert _ping(tls_port, **certs.client_options())
        with pytest.raises(redis.ConnectionError):
            _ping(tls_port)                         # plain text on the TLS port
        assert redis.Redis(port=tls_port, **certs.client_options()).config_get("port") == \
            {"port": "0"}


def _hostile(port: int, how: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    if how == "garbage":
        sock.sendall(b"*1\r\n$4\r\nPING\r\n" + bytes(range(256)) * 40)
    elif how == "stall":                      # the start of a ClientHello, then nothing
        sock.sendall(bytes.fromhex("16030102000100") + b"\x01\xfc\x03\x03")
    elif how == "close":
        sock.sendall(bytes.fromhex("160301020001"))
        sock.close()
    return sock


def test_hostile_handshakes_leave_no_trace(certs):
    """Garbage instead of a handshake, a handshake that stalls, one closed half-way, an
    abrupt reset: no traceback in the log, PING answered on both ports meanwhile and
    after, and the stalled one is dropped when `timeout` says."""
    with tls_server("sluice", certs, ["--timeout", "2"], loglevel="debug") as srv:
        socks = [_hostile(srv.tls_port, how) for how in ("garbage", "stall", "close") * 3]
        reset = socket.create_connection(("127.0.0.1", srv.tls_port))
        reset.sendall(bytes.fromhex("1603010200"))
        reset.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        reset.close()
        assert _ping(srv.port)
        assert _ping(srv.tls_port, **certs.client_options())
        stalled = socks[1]
        stalled.settimeout(10)
        started = time.monotonic()
        assert stalled.recv(100) == b""            # the server gave up on it
        assert time.monotonic() - started < 8
        for sock in socks:
            sock.close()
        assert _ping(srv.port)
        assert _ping(srv.tls_port, **certs.client_options())
        log = srv.log_text()
    assert "Traceback" not in log and "Unexpected error" not in log, log


def test_a_long_script_keeps_tls_clients_waiting_then_serves_them(certs):
    """While a script runs past busy-reply-threshold the plain clients get BUSY; a TLS
    client already connected and one connecting meanwhile wait (their bytes are the TLS
    transport's to read) and are answered once SCRIPT KILL ends it."""
    with tls_server("sluice", certs, ["--busy-reply-threshold", "100"]) as srv:
        connected = redis.Redis(port=srv.tls_port, socket_timeout=20, **certs.client_options())
        assert connected.ping()
        looping = socket.create_connection(("127.0.0.1", srv.port))
        looping.sendall(b"EVAL \"while true do end\" 0\r\n")
        plain = redis.Redis(port=srv.port, socket_timeout=20)
        deadline = time.monotonic() + 10
        while True:
            try:
                plain.ping()
            except redis.ResponseError as exc:
                assert str(exc).startswith("BUSY"), exc
                break
            assert time.monotonic() < deadline, "the script never became busy"
            time.sleep(0.05)
        raw_ctx = ssl.create_default_context(cafile=str(certs.ca))
        raw_ctx.load_cert_chain(str(certs.client_cert), str(certs.client_key))
        raw = socket.create_connection(("127.0.0.1", srv.tls_port), timeout=20)
        newcomer = raw_ctx.wrap_socket(raw, server_hostname="127.0.0.1", do_handshake_on_connect=False)
        newcomer.setblocking(False)
        waiting = connected.connection_pool.get_connection()
        waiting.send_command("PING")
        time.sleep(0.5)
        assert plain.script_kill()
        newcomer.settimeout(20)
        newcomer.do_handshake()
        newcomer.sendall(b"PING\r\n")
        assert newcomer.recv(100) == b"+PONG\r\n"
        newcomer.close()
        assert waiting.read_response() == b"PONG"
        connected.connection_pool.release(waiting)
        assert looping.recv(200).startswith(b"-ERR Script killed by user with SCRIPT KILL")
        looping.close()
        assert connected.ping() and plain.ping()
        log = srv.log_text()
    assert "Traceback" not in log, log


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_tls_port_opened_and_closed_by_config_set(kind, certs):
    """A server started without TLS: tls-port refused until a certificate and key are
    set (Redis's error), then listening; a change of bind moves it too; 0 closes it."""
    with servers.server_of_kind(kind) as srv:
        admin = redis.Redis(port=srv.port)
        tls_port = free_port()
        with pytest.raises(redis.ResponseError) as refused:
            admin.config_set("tls-port", tls_port)
        assert str(refused.value) == ("CONFIG SET failed (possibly related to argument "
                                      "'tls-port') - Unable to update TLS configuration. "
                                      "Check server logs.")
        assert admin.config_get("tls-port") == {"tls-port": "0"}
        assert admin.config_set("tls-cert-file", str(certs.server_cert))
        assert admin.config_set("tls-key-file", str(certs.server_key))
        assert admin.config_set("tls-ca-cert-file", str(certs.ca))
        assert admin.config_set("tls-port", tls_port)
        assert _ping(tls_port, **certs.client_options())
        assert admin.config_set("bind", "127.0.0.1 -::1")
        assert _ping(tls_port, **certs.client_options()) and admin.ping()
        assert admin.config_set("tls-port", 0)
        with pytest.raises(redis.ConnectionError):
            _ping(tls_port, **certs.client_options())
        assert admin.ping()
        admin.close()


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_encrypted_key_and_ca_directory(kind, certs, tmp_path):
    """tls-key-file-pass opens an encrypted key (a wrong one, or none, refuses the start;
    sluice-server never asks the terminal for one); tls-ca-cert-dir, a c_rehash'ed
    directory of CAs, alone verifies the clients."""
    key = tmp_path / "encrypted.key"
    subprocess.run(["openssl", "pkey", "-in", str(certs.server_key), "-aes256", "-passout",
                    "pass:sesame", "-out", str(key)], check=True, capture_output=True)
    ca_dir = tmp_path / "cas"
    ca_dir.mkdir()
    shutil.copy(certs.ca, ca_dir / "ca.crt")
    subprocess.run(["openssl", "rehash", str(ca_dir)], check=True, capture_output=True)
    args = ["--tls-key-file", str(key), "--tls-ca-cert-file", "", "--tls-ca-cert-dir", str(ca_dir)]
    with tls_server(kind, certs, [*args, "--tls-key-file-pass", "sesame"], workdir=tmp_path) as srv:
        assert _ping(srv.tls_port, **certs.client_options())
        assert _refused(srv.tls_port, **certs.client_options(cert=certs.other_client_cert))
    for wrong in (["--tls-key-file-pass", "wrong"], []):
        srv = tls_server(kind, certs, [*args, *wrong], workdir=tmp_path,
                         **({"port": free_port()} if kind == "sluice" else {}))
        refusal = srv.try_start() if kind == "redis" else None
        if kind == "sluice":
            with pytest.raises(ServerDidNotStart) as failure:
                srv.start()
            refusal = str(failure.value)
        assert f"Failed to load private key: {key}: " in refusal
        assert "Failed to configure TLS. Check logs for more info." in refusal
