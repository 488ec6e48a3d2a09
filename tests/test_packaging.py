"""The wheel and the sdist as a user gets them: `python -m build` makes both once, the
wheel from the unpacked sdist in an isolated build environment (what `pip install` of
the sdist does, so the sdist is proven to build without the checkout); the wheel is
installed with pip into a fresh venv (dependencies from the package index, nothing from
the checkout), and a smoke test runs there from an empty directory: the embedded engine
(SET, GET, XADD, EmbeddedRedis), `import sluice.worker, sluice.spark`, `sluice-worker
--help`, `sluice-top --help`, and a
`sluice-server` that answers PING. The wheel carries no generated C, no Cython sources,
no examples or tests, and extension modules without debug information or symbols."""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
import redis

from servers import ROOT, free_port, wait_for_ping

pytestmark = pytest.mark.slow

BUILD_TIMEOUT_S = 1200
INSTALL_TIMEOUT_S = 900
INSTALLED_TOP_LEVEL = {"engine", "persist", "sluice", "tools"}

SMOKE = """
import sys
import engine, persist, sluice, sluice.spark, sluice.worker, tools
from sluice import EmbeddedRedis, Engine, Worker

for module in (engine, persist, sluice, tools):
    assert module.__file__.startswith(sys.prefix), (module.__file__, sys.prefix)
e = Engine()
e.execute("SET", "k", "v")
assert e.execute("GET", "k") == b"v"
entry_id = e.execute("XADD", "s", "*", "f", "v")
assert e.execute("XRANGE", "s", "-", "+") == [[entry_id, [b"f", b"v"]]]
r = EmbeddedRedis(engine=e)
assert r.xlen("s") == 1 and r.get("k") == b"v"
assert callable(Worker) and callable(sluice.spark.register)
print("smoke ok")
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict:
    """{"wheel": path, "sdist": path}, built once: the sdist, then the wheel from it."""
    pytest.importorskip("build", reason="python -m build comes with the test extra (pip install '.[test]')")
    out = tmp_path_factory.mktemp("dist")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"python -m build: {time.monotonic() - started:.0f} s")
    [wheel] = out.glob("sluice-*.whl")
    [sdist] = out.glob("sluice-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_wheel_ships_only_what_runs(dist) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = wheel.namelist()
        top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
        assert top == INSTALLED_TOP_LEVEL
        shipped_sources = [n for n in names if n.endswith((".c", ".pyx", ".pxd", ".html"))]
        assert not shipped_sources
        modules = [n for n in names if n.endswith(".so")]
        assert len(modules) == len(list(ROOT.glob("engine/**/*.pyx")) + list(ROOT.glob("persist/*.pyx")))
        for name in modules:
            data = wheel.read(name)
            assert b".debug_info" not in data and b".symtab" not in data, f"{name} is not stripped"
        unpacked = sum(info.file_size for info in wheel.infolist())
    print(f"wheel {dist['wheel'].stat().st_size / 1e6:.1f} MB, unpacked {unpacked / 1e6:.1f} MB")


def test_sdist_ships_sources_not_builds(dist) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        names = sdist.getnames()
    assert not [n for n in names if n.endswith((".c", ".so", ".html"))]
    assert any(n.endswith("engine/core/stream.pyx") for n in names)
    assert not [n for n in names if "/examples/" in n or "/tests/" in n]


def test_installs_in_a_fresh_venv_and_runs(dist, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, scripts = venv / "bin" / "python", venv / "bin"
    started = time.monotonic()
    pip_env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           str(dist["wheel"])], env=pip_env, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"pip install the wheel: {time.monotonic() - started:.0f} s")
    empty = tmp_path / "cwd"
    empty.mkdir()
    for name in ("pipeline.py", "worker.py", "spark.py"):     # a user's own modules
        (empty / name).write_text("raise SystemExit('a module of the user, not ours')\n")
    clean_env = {"PATH": f"{scripts}:/usr/bin:/bin", "HOME": str(tmp_path)}

    smoke = subprocess.run([str(python), "-c", SMOKE], cwd=empty, env=clean_env, capture_output=True,
                           text=True, timeout=120)
    assert smoke.returncode == 0 and smoke.stdout.strip() == "smoke ok", smoke.stderr
    helped = subprocess.run([str(scripts / "sluice-worker"), "--help"], cwd=empty, env=clean_env,
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: sluice-worker"), helped.stderr
    top = subprocess.run([str(scripts / "sluice-top"), "--help"], cwd=empty, env=clean_env,
                         capture_output=True, text=True, timeout=60)
    assert top.returncode == 0 and top.stdout.startswith("usage: sluice-top"), top.stderr

    port = free_port()
    log = empty / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen([str(scripts / "sluice-server"), "--port", str(port), "--bind", "127.0.0.1",
                                   "--dir", str(empty)], cwd=empty, env=clean_env, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        client = redis.Redis(port=port, socket_timeout=5)
        wait_for_ping(client, server, log.read_text)
        assert client.ping() is True
        client.close()
    finally:
        server.terminate()
        assert server.wait(timeout=30) == 0, log.read_text()
