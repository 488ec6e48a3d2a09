"""The worker (`sluice-worker`) and the Spark connector under least-privilege ACL users,
over TLS with client certificates given in the `rediss://` URL's query: the
`ACL SETUSER` lines are README's own, so what README promises is what runs here. A
task that fails goes to its retry and to the dead-letter stream, Spark reads two
streams and writes one; no command is refused (ACL LOG stays empty), and a command
outside a user's rights gets NOPERM, nothing else.

The server is a parameter: redis-server 7.0 and sluice-server."""
from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

import servers
from servers import SERVER_KINDS, needs_redis, tls_server
from tls_certs import TestCerts, make_certs

pytestmark = needs_redis

PASSWORD = "least-privilege-pw"
README = Path(__file__).resolve().parents[2] / "README.md"
STREAM, GROUP = "orders", "billing"
WAIT_S = 60.0


def readme_acl_lines() -> dict:
    """user -> README's `ACL SETUSER user ...` line (its password `>PASSWORD`)."""
    found = {user: line for line, user in
             re.findall(r"^(ACL SETUSER (sluice-\S+) .*)$", README.read_text(), re.M)}
    assert set(found) == {"sluice-worker", "sluice-reader", "sluice-writer"}, found
    return found


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> TestCerts:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(params=list(SERVER_KINDS))
def acl_server(request, certs: TestCerts, tmp_path: Path) -> Iterator:
    """A server with README's users, serving TLS (client certificates required) beside
    a plain port where the default user checks what the tests' users did."""
    with tls_server(request.param, certs, ["--notify-keyspace-events", "Ex"],
                    workdir=tmp_path) as srv:
        admin = redis.Redis(port=srv.port, decode_responses=True)
        for line in readme_acl_lines().values():
            assert admin.execute_command(*shlex.split(line.replace(">PASSWORD", ">" + PASSWORD)))
        srv.admin = admin
        yield srv
        admin.close()


def rediss_url(srv, certs: TestCerts, user: str = "") -> str:
    """The server's TLS URL with our password (and `user`), the CA and the client's
    certificate and key as redis-py's query options."""
    return (f"rediss://{user}:{PASSWORD}@127.0.0.1:{srv.tls_port}/0?ssl_ca_certs={certs.ca}"
            f"&ssl_certfile={certs.client_cert}&ssl_keyfile={certs.client_key}")


def acl_log(admin: redis.Redis) -> list:
    """ACL LOG's refusals, but for redis-py's CLIENT SETINFO on connecting (a server that
    has the command refuses it to these users; redis-py goes on, as README says)."""
    setinfo = (b"client|setinfo", "client|setinfo")      # as the admin client decodes
    return [entry for entry in admin.execute_command("ACL", "LOG")
            if entry.get(b"object", entry.get("object")) not in setinfo]


HANDLERS = textwrap.dedent("""
    import os
    import redis
    _admin = redis.Redis(port=int(os.environ["ADMIN_PORT"]), password=os.environ["ADMIN_PASSWORD"] or None)

    def handle(task):
        if task.fields.get("fail") == "always" or (task.fields.get("fail") and task.retry_count == 0):
            raise ValueError("failing as told")
        _admin.xadd("done", {"n": task.fields["n"]})
""")


def run_worker(srv, admin: redis.Redis, url: str, *args: str, cwd: Path, password: str = "") -> str:
    """`sluice-worker` on STREAM (30 tasks, every fifth failing once, one always) until
    all are done or dead-lettered; its log (stderr) once SIGTERM stopped it cleanly."""
    for n in range(30):
        admin.xadd(STREAM, {"n": n, **({"fail": "once"} if n % 5 == 0 else {})})
    admin.xadd(STREAM, {"n": 99, "fail": "always"})
    (cwd / "least_handlers.py").write_text(HANDLERS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sluice.worker.cli", "least_handlers:handle", "--stream", STREAM,
         "--group", GROUP, "--url", url, "--lock-ttl", "0.5", "--block", "0.2",
         "--min-idle-time", "1", "--max-retries", "1", "--reconciliation-interval", "0.5",
         "--shutdown-timeout", "1", *args],
        cwd=cwd, env=servers.checkout_env(ADMIN_PORT=str(srv.port), ADMIN_PASSWORD=password),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT_S
    while (len({f["n"] for _, f in admin.xrange("done")}) < 30 or admin.xlen("{orders}:dlq") < 1) \
            and proc.poll() is None:
        assert time.monotonic() < deadline, "the worker did not finish its tasks"
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0, err
    # at least once: a task whose lock (0.5 s) lapsed on a busy machine may run twice
    assert {int(f["n"]) for _, f in admin.xrange("done")} == set(range(30))
    assert admin.xlen("{orders}:dlq") == 1
    return err


def test_worker_as_its_user_over_tls(acl_server, certs: TestCerts, tmp_path: Path) -> None:
    """The user named by --user, its password and the TLS options in the URL: retries,
    the dead-letter stream, lock expiry events; nothing refused."""
    admin = acl_server.admin
    err = run_worker(acl_server, admin, rediss_url(acl_server, certs), "--user", "sluice-worker",
                     cwd=tmp_path)
    assert acl_log(admin) == [], err
    assert "NOPERM" not in err and "no permissions" not in err, err
    assert "expired-key events are off" not in err, err

    worker = redis.Redis.from_url(rediss_url(acl_server, certs, "sluice-worker"))
    assert worker.xrange(STREAM, count=1)          # what it may do, it does
    for refused in (lambda: worker.xadd("other", {"f": "v"}), lambda: worker.flushall(),
                    lambda: worker.get("events:a"), lambda: worker.keys()):
        with pytest.raises(redis.exceptions.NoPermissionError):
            refused()
    worker.close()


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_worker_over_tls_with_a_password(kind, certs: TestCerts, tmp_path: Path) -> None:
    """Either server, its default user's password (requirepass) and a client
    certificate in the rediss:// URL."""
    with tls_server(kind, certs, ["--requirepass", PASSWORD], workdir=tmp_path) as srv:
        admin = redis.Redis(port=srv.port, password=PASSWORD, decode_responses=True)
        err = run_worker(srv, admin, rediss_url(srv, certs), cwd=tmp_path, password=PASSWORD)
        assert "expired-key events are off" not in err, err
        assert re.search(r"tasks_done=(3\d)\b", err), err
        admin.close()


def test_spark_reader_and_writer_as_their_users_over_tls(acl_server, certs: TestCerts, spark) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
    from spark_streams import expected_rows, fill_streams, read_back
    admin = redis.Redis(port=acl_server.port)
    written = fill_streams(admin, ["events:a", "events:b"], 300)
    reader_url = rediss_url(acl_server, certs)
    table = (spark.read.format("sluice").option("url", reader_url).option("user", "sluice-reader")
             .option("streamPattern", "events:*").load().toArrow())
    assert read_back(table) == expected_rows(written)

    df = spark.createDataFrame([("events:out", {"n": str(i)}) for i in range(200)],
                               "stream string, fields map<string,string>")
    (df.write.format("sluice").option("url", rediss_url(acl_server, certs, "sluice-writer"))
     .option("idempotent", "false").mode("append").save())
    assert sorted(int(f[b"n"]) for _, f in admin.xrange("events:out")) == list(range(200))
    assert acl_log(admin) == []

    reader = redis.Redis.from_url(rediss_url(acl_server, certs, "sluice-reader"))
    writer = redis.Redis.from_url(rediss_url(acl_server, certs, "sluice-writer"))
    for refused in (lambda: reader.xadd("events:a", {"f": "v"}), lambda: writer.xrange("events:a"),
                    lambda: reader.xrange("orders"), lambda: writer.xadd("orders", {"f": "v"})):
        with pytest.raises(redis.exceptions.NoPermissionError):
            refused()
    reader.close()
    writer.close()
    admin.close()
