"""Format `sluice` over TLS (`rediss://`) with a password, on redis-server and on
sluice-server: a server serving TLS beside its plain port, with the test CA's
certificate (tests/tls_certs.py); the reader and the sink both go through it, and a
client that does not trust the certificate is refused clearly."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

from servers import SERVER_KINDS, needs_redis, tls_server  # noqa: E402
from spark_streams import expected_rows, fill_streams, read_back  # noqa: E402
from tls_certs import make_certs  # noqa: E402

pytestmark = needs_redis
PASSWORD = "tls-s3cret"


@pytest.fixture(params=list(SERVER_KINDS))
def tls_server_port(request, tmp_path) -> Iterator[tuple[int, str]]:
    """(TLS port, CA file) of a server that wants a password (no client certificate)."""
    certs = make_certs(tmp_path / "certs")
    with tls_server(request.param, certs, ["--tls-auth-clients", "no", "--requirepass", PASSWORD],
                    workdir=tmp_path) as srv:
        yield srv.tls_port, certs.ca


def test_read_and_write_over_tls_with_a_password(spark, tls_server_port):
    port, ca = tls_server_port
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


def test_an_untrusted_certificate_is_refused_clearly(spark, tls_server_port):
    port, _ = tls_server_port
    url = f"rediss://:{PASSWORD}@127.0.0.1:{port}/0"      # the system's CAs: not ours
    with pytest.raises(Exception) as failure:
        spark.read.format("sluice").option("url", url).option("streams", "tls:a").load().count()
    assert f"cannot reach the server at rediss://:***@127.0.0.1:{port}/0 (option url)" in str(failure.value)
    assert PASSWORD not in str(failure.value)
