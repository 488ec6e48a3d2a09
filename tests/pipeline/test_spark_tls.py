"""Format `sluice` over TLS (`rediss://`) with a password: Debian's redis-server serving
TLS only, with a certificate made for the test; the reader and the sink both go
through it, and a client that does not trust the certificate is refused clearly."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

from servers import RedisServer  # noqa: E402
from spark_streams import expected_rows, fill_streams, read_back  # noqa: E402

PASSWORD = "tls-s3cret"


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """(TLS port, CA file) of a redis-server that only speaks TLS and wants a password."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificate", pytrace=False)
    directory = tmp_path
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    with RedisServer(["--port", "0", "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                      "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no",
                      "--requirepass", PASSWORD, "--save", "", "--appendonly", "no"],
                     workdir=directory, port_option="--tls-port",
                     client_options={"password": PASSWORD, "ssl": True,
                                     "ssl_ca_certs": str(cert)}) as srv:
        yield srv.port, cert


def test_read_and_write_over_tls_with_a_password(spark, tls_server):
    port, ca = tls_server
    url = f"rediss://:{PASSWORD}@127.0.0.1:{port}/0?ssl_ca_certs={ca}"
    client = redis.Redis.from_url(url)
    client.flushall()
    written = fill_streams(client, ["tls:a", "tls:b"], 500)
    table = (spark.read.format("sluice").option("url", url).option("streams", "tls:a,tls:b")
             .load().toArrow())
    assert read_back(table) == expected_rows(written)

    df = spark.createDataFrame([("tls:out", {"n": str(i)}) for i in range(300)],
                               "stream string, fields map<string,string>")
    df.write.format("sluice").option("url", url).option("idempotent", "false").mode("append").save()
    # Spark's tasks write their partitions concurrently: every row once, in any order.
    written_back = sorted(int(fields[b"n"]) for _, fields in client.xrange("tls:out"))
    assert written_back == list(range(300))
    client.close()


def test_an_untrusted_certificate_is_refused_clearly(spark, tls_server):
    port, _ = tls_server
    url = f"rediss://:{PASSWORD}@127.0.0.1:{port}/0"      # the system's CAs: not ours
    with pytest.raises(Exception) as failure:
        spark.read.format("sluice").option("url", url).option("streams", "tls:a").load().count()
    assert f"cannot reach the server at rediss://:***@127.0.0.1:{port}/0 (option url)" in str(failure.value)
    assert PASSWORD not in str(failure.value)
