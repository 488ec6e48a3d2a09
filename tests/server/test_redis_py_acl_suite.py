"""redis-py's own ACL tests (its test_commands.py `test_acl_*` and the AUTH/username
ones of test_connection.py) run against sluice-server: the source distribution of the
installed redis-py is fetched with pip (its wheel has no tests) and its suite pointed at
the server with --redis-url."""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile

import pytest
import redis

from servers import SluiceServer, fresh_dir


@pytest.fixture(scope="module")
def redis_py_tests():
    folder = fresh_dir("redis-py-sdist")
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", f"redis=={redis.__version__}",
         "--no-binary", ":all:", "--no-deps", "--quiet", "-d", str(folder)],
        capture_output=True, text=True, timeout=120)
    archives = list(folder.glob("redis-*.tar.gz"))
    if fetched.returncode or not archives:
        why = "redis-py's source distribution could not be fetched (offline?): " + fetched.stderr[-300:]
        if os.environ.get("CI") == "true":      # CI reaches the package index: a skip would prove nothing
            pytest.fail(why, pytrace=False)
        pytest.skip(reason=why)
    with tarfile.open(archives[0]) as tar:
        tar.extractall(folder, filter="data")
    return next(folder.glob("redis-*/tests")).parent


def test_redis_py_acl_tests_pass(redis_py_tests) -> None:
    with SluiceServer() as srv:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/test_commands.py", "tests/test_connection.py",
             "-k", "acl or auth or password or username",
             f"--redis-url=redis://127.0.0.1:{srv.port}"],
            cwd=redis_py_tests, capture_output=True, text=True, timeout=600)
        summary = run.stdout.strip().splitlines()[-1]
        assert run.returncode == 0, run.stdout[-4000:]
        assert " passed" in summary and int(summary.split(" passed")[0].split()[-1]) >= 15
        assert "Traceback" not in srv.log_text()
