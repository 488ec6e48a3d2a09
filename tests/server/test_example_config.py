"""The example configuration file at the repository's root: written from the directive
table (so it lists every directive at its default), and a server started from it runs
with exactly the configuration of a server started with none."""
from __future__ import annotations

from pathlib import Path

import redis

from engine.server.config.directives import DIRECTIVES
from engine.server.config.example import example_config
from servers import SluiceServer

EXAMPLE = Path(__file__).resolve().parents[2] / "sluice.conf"


def test_the_example_file_is_the_directive_table():
    """Regenerate it with `make conf` when a directive is added or changed."""
    assert EXAMPLE.read_text() == example_config()
    names = {line.split()[0] for line in EXAMPLE.read_text().splitlines()
             if line and not line.startswith("#")}
    assert names == {d.name for d in DIRECTIVES}


def config_of(server: SluiceServer) -> dict:
    client = redis.Redis(port=server.port)
    try:
        return client.config_get("*")
    finally:
        client.close()


def test_a_server_started_from_it_has_the_default_configuration(tmp_path):
    for name in ("plain", "from-file"):
        (tmp_path / name).mkdir()
    with SluiceServer(workdir=tmp_path / "plain") as plain:
        expected = config_of(plain)
    with SluiceServer(workdir=tmp_path / "from-file", config_file=str(EXAMPLE)) as server:
        got = config_of(server)
    for differs in ("dir", "port", "logfile"):     # each server's own
        expected.pop(differs), got.pop(differs)
    assert got == expected
