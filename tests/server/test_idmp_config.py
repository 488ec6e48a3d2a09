"""stream-idmp-duration and stream-idmp-maxsize (Redis 8.6): CONFIG GET/SET with their
ranges, the command line and the config file, and the server's streams using them
(redis-server 7.0 has neither; the CONFIG comparisons of test_config.py leave them out).
Source: redis/redis tests/unit/type/stream.tcl ("CONFIG SET stream-idmp-duration and
stream-idmp-maxsize validation"), https://redis.io/docs/latest/commands/xcfgset/."""
from __future__ import annotations

import pytest
import redis

from engine.core.errors import ResponseError
from engine.resp.reply import OK
from engine.server.config.server_config import ServerConfig
from engine.server.config.config_command import config_command
from servers import SluiceServer


def run(cfg: ServerConfig, *args: str):
    return config_command(cfg, [a.encode() for a in args])


@pytest.mark.parametrize("name, bad, good", [
    ("stream-idmp-duration", ["86401", "100000", "0", "-1", "-100"], ["86400", "1", "100"]),
    ("stream-idmp-maxsize", ["10001", "50000", "0", "-1", "-100"], ["10000", "1", "100"]),
])
def test_config_set_validates_the_range(name, bad, good):
    cfg = ServerConfig()
    assert run(cfg, "CONFIG", "GET", name) == [name.encode(), b"100"]
    for value in bad:
        with pytest.raises(ResponseError, match="must be between"):
            run(cfg, "CONFIG", "SET", name, value)
    for value in good:
        assert run(cfg, "CONFIG", "SET", name, value) == OK
        assert run(cfg, "CONFIG", "GET", name) == [name.encode(), value.encode()]


def test_command_line_and_config_file(tmp_path):
    conf = tmp_path / "idmp.conf"
    conf.write_text("stream-idmp-duration 300\n")
    cfg = ServerConfig.from_args([str(conf), "--stream-idmp-maxsize", "50"])
    assert (cfg.stream_idmp_duration, cfg.stream_idmp_maxsize) == (300, 50)


def test_server_streams_follow_the_directives():
    with SluiceServer(["--stream-idmp-duration", "300"]) as srv:
        client = redis.Redis(port=srv.port)
        client.xadd("plain", {"f": "v"})
        info = client.xinfo_stream("plain")
        assert (info["idmp-duration"], info["idmp-maxsize"]) == (300, 100)
        assert client.config_set("stream-idmp-maxsize", 2)
        first = client.execute_command("XADD", "s", "IDMP", "p", "a", "*", "f", "v")
        for iid in ("b", "c"):
            client.execute_command("XADD", "s", "IDMP", "p", iid, "*", "f", "v")
        assert client.execute_command("XADD", "s", "IDMP", "p", "a", "*", "f", "v") != first
        info = client.xinfo_stream("s")
        assert (info["idmp-maxsize"], info["iids-tracked"], info["pids-tracked"]) == (2, 2, 1)
        assert client.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", 7) == b"OK"
        assert client.xinfo_stream("s")["idmp-maxsize"] == 7
        client.close()
