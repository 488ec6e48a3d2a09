"""README's Spark snippet, run as pasted in the suite's Spark session, its addresses and
paths pointed at a server of the test (the snippet names 127.0.0.1:6379, an `archive`
host, /var/lib/jobs and /var/lib/sluice)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis

from servers import SluiceServer

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

ROOT = Path(__file__).resolve().parents[2]
[SNIPPET] = [s for s in re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
             if "pyspark" in s]


def test_the_spark_snippet_runs(spark, tmp_path):
    with SluiceServer(["--save", ""]) as server:
        client = redis.Redis(port=server.port)
        for i in range(5):
            client.xadd("orders", {"amount": i})
        client.xadd("refunds", {"amount": 9})
        client.xadd("views:home", {"page": "home"})
        client.save()
        address = f"127.0.0.1:{server.port}"
        code = (SNIPPET.replace("127.0.0.1:6379", address).replace("archive:6379", address)
                .replace("/var/lib/jobs", str(tmp_path)).replace("/var/lib/sluice", server.dir))
        names: dict = {}
        exec(compile(code, "README.md", "exec"), names)    # noqa: S102 - the snippet under test
        try:
            assert names["query"].isActive
            assert names["orders"].count() == 6
            assert client.xlen("orders") == 10 and client.xlen("refunds") == 2
            assert names["audit"].count() == 0         # the snapshot holds no PEL
        finally:
            names["query"].stop()
            client.close()
