"""sluice-top against real servers: `--once --json` on sluice-server (a password in the
URL) and redis-server 7.0 (an ACL user; TLS with a CA file), its figures compared with
what the fixture wrote; and the live view in a real terminal (tmux: send-keys,
capture-pane): the stream, group, lag and pending figures, their change within a
second of a write, the sort and filter keys."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List

import pytest
import redis

pytest.importorskip("rich", reason="sluice-top needs rich; `make test` installs the top extra")

from servers import RedisServer, SluiceServer, checkout_env  # noqa: E402

PASSWORD = "top-s3cret"


def fill(client: redis.Redis) -> None:
    """orders: 30 entries, group billing read 10 and acknowledged 4 (lag 20, pending 6),
    group audit at the end; events: 5 entries, no group; a worker's dead-letter stream of
    orders with 2; a string key that is no stream."""
    client.flushall()
    for n in range(30):
        client.xadd("orders", {"n": n})
    client.xgroup_create("orders", "billing", "0")
    client.xgroup_create("orders", "audit", "$")
    read = client.xreadgroup("billing", "c1", {"orders": ">"}, count=10)[0][1]
    client.xack("orders", "billing", *[entry_id for entry_id, _ in read[:4]])
    for n in range(5):
        client.xadd("events", {"n": n})
    for n in range(2):
        client.xadd("{orders}:dlq", {"n": n})
    client.set("plain", "not a stream")


def top_once(url: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "sluice.top.cli", url, "--once", "--json", "--interval", "0.5",
                           *args], env=checkout_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def check_figures(reading: dict, client: redis.Redis, engine: str) -> None:
    streams = {stream["name"]: stream for stream in reading["streams"]}
    assert set(streams) >= {"orders", "events", "{orders}:dlq"} and "plain" not in streams
    orders = streams["orders"]
    assert (orders["length"], orders["entries_added"], orders["dead_letters"]) == (30, 30, False)
    assert orders["memory"] == client.memory_usage("orders")
    groups = {group["name"]: group for group in orders["groups"]}
    billing, audit = groups["billing"], groups["audit"]
    assert (billing["lag"], billing["pending"], audit["lag"], audit["pending"]) == (20, 6, 0, 0)
    assert [(c["name"], c["pending"]) for c in billing["consumers"]] == [("c1", 6)]
    assert 0 <= billing["oldest_pending_idle_ms"] < 60_000 and audit["oldest_pending_idle_ms"] is None
    assert (streams["events"]["length"], streams["events"]["groups"]) == (5, [])
    assert streams["{orders}:dlq"]["dead_letters"] and streams["{orders}:dlq"]["length"] == 2
    server = reading["server"]
    assert server["engine"] == engine and server["clients"] >= 1 and server["used_memory"] > 0
    assert server["persistence"]["aof_enabled"] == 0 and server["ops_per_sec"] > 0   # its own calls


def written_while(client: redis.Redis, stream: str, action: Callable[[], dict]) -> dict:
    """action()'s result while a thread adds to `stream` every 20 ms."""
    stop = threading.Event()

    def add() -> None:
        while not stop.is_set():
            client.xadd(stream, {"n": 1})
            time.sleep(0.02)

    thread = threading.Thread(target=add)
    thread.start()
    try:
        return action()
    finally:
        stop.set()
        thread.join()


def test_once_json_on_sluice_with_a_password(tmp_path: Path) -> None:
    with SluiceServer(["--save", "", "--requirepass", PASSWORD], workdir=tmp_path) as server:
        client = redis.Redis(port=server.port, password=PASSWORD)
        fill(client)
        url = f"redis://default:{PASSWORD}@127.0.0.1:{server.port}/0"
        reading = written_while(client, "clicks", lambda: top_once(url))
        check_figures(reading, client, "sluice")
        rates = {stream["name"]: stream["entries_per_sec"] for stream in reading["streams"]}
        assert rates["clicks"] > 0 and rates["orders"] == rates["events"] == 0
        assert [s["name"] for s in top_once(url, "--sort", "length")["streams"]][:2] == ["clicks", "orders"]
        assert [s["name"] for s in top_once(url, "--filter", "orders")["streams"]] == ["orders", "{orders}:dlq"]
        client.xadd(b"[/]raw\xff", {"n": 1})       # not UTF-8, and rich's markup: shown as it is
        group = client.xgroup_create(b"[/]raw\xff", b"g\xfe", "0")
        assert group and [(s["name"], [g["name"] for g in s["groups"]])
                          for s in top_once(url, "--filter", "raw")["streams"]] == [("[/]raw\\xff", ["g\\xfe"])]
        shown = subprocess.run([sys.executable, "-m", "sluice.top.cli", url, "--once", "--interval", "0.1",
                                "--filter", "raw"], env=checkout_env(COLUMNS="150"), capture_output=True,
                               text=True, timeout=60)
        assert shown.returncode == 0 and "[/]raw\\xff" in shown.stdout and "g\\xfe" in shown.stdout, shown.stderr
        refused = subprocess.run([sys.executable, "-m", "sluice.top.cli", f"redis://127.0.0.1:{server.port}/0",
                                  "--once"], env=checkout_env(), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "authenticated" in refused.stderr
        assert PASSWORD not in refused.stderr
        client.close()


def test_once_json_on_redis_with_an_acl_user(tmp_path: Path) -> None:
    with RedisServer(["--save", "", "--appendonly", "no"], workdir=tmp_path) as server:
        client = server.client()
        client.acl_setuser("watcher", enabled=True, passwords=[f"+{PASSWORD}"], keys=["*"],
                           commands=["+@read", "+info", "+memory|usage"])
        fill(client)
        reading = top_once(f"redis://watcher:{PASSWORD}@127.0.0.1:{server.port}/0")
        check_figures(reading, client, "redis")
        client.close()


def test_once_json_over_tls(tmp_path: Path) -> None:
    """rediss:// with the server's CA given by --cacert, the password by --password."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test's certificate", pytrace=False)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    with RedisServer(["--port", "0", "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                      "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no", "--requirepass", PASSWORD,
                      "--save", "", "--appendonly", "no"], workdir=tmp_path, port_option="--tls-port",
                     client_options={"password": PASSWORD, "ssl": True, "ssl_ca_certs": str(cert)}) as server:
        client = server.client()
        fill(client)
        reading = top_once(f"rediss://127.0.0.1:{server.port}/0", "--password", PASSWORD, "--cacert", str(cert))
        check_figures(reading, client, "redis")
        client.close()


class Terminal:
    """sluice-top in a tmux session of its own tmux server (socket in tmp_path)."""

    def __init__(self, tmp_path: Path, command: List[str]) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is needed (`make test` installs it)", pytrace=False)
        self.socket = str(tmp_path / "tmux.sock")
        env = checkout_env(TERM="xterm-256color")
        self.tmux("new-session", "-d", "-s", "top", "-x", "150", "-y", "45",
                  " ".join(["env", f"PYTHONPATH={env['PYTHONPATH']}", *command]), env=env)

    def tmux(self, *args: str, env: dict | None = None) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True,
                              env=env, timeout=30).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "top")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "top", *keys)

    def wait_for(self, shows: Callable[[str], bool], seconds: float) -> float:
        """Seconds until the screen shows it; fails with the screen after `seconds`."""
        started = time.monotonic()
        while True:
            screen = self.screen()
            if shows(screen):
                return time.monotonic() - started
            if time.monotonic() - started > seconds:
                pytest.fail(f"not shown within {seconds} s:\n{screen}")
            time.sleep(0.05)

    def running(self) -> bool:
        """Whether the session (sluice-top) still runs."""
        return subprocess.run(["tmux", "-S", self.socket, "has-session", "-t", "top"], capture_output=True,
                              timeout=30).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=30)


def row(screen: str, *cells: str) -> List[str]:
    """The cells of the table row starting with `cells` (none: [])."""
    for line in screen.splitlines():
        parts = [part.strip() for part in line.strip("│ ").split("│")]
        if parts[:len(cells)] == list(cells):
            return parts
    return []


def stream_order(screen: str) -> List[str]:
    """The streams table's rows, in order (up to the groups table)."""
    table = screen.split("consumer groups")[0]
    return [line.strip("│ ").split("│")[0].strip() for line in table.splitlines() if line.startswith("│")]


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, redis.Redis]]:
    with SluiceServer(["--save", ""], workdir=tmp_path) as server:
        client = redis.Redis(port=server.port, decode_responses=True)
        fill(client)
        terminal = Terminal(tmp_path, [sys.executable, "-m", "sluice.top.cli",
                                       f"redis://127.0.0.1:{server.port}/0", "--interval", "0.2"])
        try:
            yield terminal, client
        finally:
            terminal.close()
            client.close()


def test_the_live_view_shows_groups_and_follows_changes(terminal: tuple[Terminal, redis.Redis]) -> None:
    screen, client = terminal
    screen.wait_for(lambda text: row(text, "orders", "billing")[2:4] == ["20", "6"], 30)
    text = screen.screen()
    assert row(text, "orders", "audit")[2:4] == ["0", "0"] and "c1(" in row(text, "orders", "billing")[5]
    assert row(text, "orders")[1] == "30" and row(text, "events")[1] == "5"
    assert row(text, "{orders}:dlq")[1] == "2"                        # the dead-letter table
    client.xreadgroup("billing", "c2", {"orders": ">"}, count=5)
    took = screen.wait_for(lambda text: row(text, "orders", "billing")[2:4] == ["15", "11"], 5)
    assert took < 1.0, f"the change showed after {took:.2f} s"
    for n in range(12):
        client.xadd("events", {"n": n})
    took = screen.wait_for(lambda text: row(text, "events")[1] == "17", 5)
    assert took < 1.0, f"the change showed after {took:.2f} s"


def test_the_sort_and_filter_keys(terminal: tuple[Terminal, redis.Redis]) -> None:
    screen, client = terminal
    screen.wait_for(lambda text: "orders" in text and "sort name" in text, 30)
    assert stream_order(screen.screen()) == ["events", "orders"]
    screen.keys("s")                                                  # name -> length
    screen.wait_for(lambda text: "sort length" in text and stream_order(text) == ["orders", "events"], 2)
    screen.keys("r")
    screen.wait_for(lambda text: "sort length reversed" in text and stream_order(text) == ["events", "orders"], 2)
    screen.keys("/", "e", "v", "e", "n", "t", "Enter")
    screen.wait_for(lambda text: "filter 'event'" in text and stream_order(text) == ["events"]
                    and not row(text, "orders", "billing") and not row(text, "{orders}:dlq"), 2)
    screen.keys("Escape")
    screen.wait_for(lambda text: "filter '" not in text and stream_order(text) == ["events", "orders"], 2)
    screen.keys("q")
    deadline = time.monotonic() + 5
    while screen.running():
        assert time.monotonic() < deadline, "q did not quit"
        time.sleep(0.05)


def test_rates_and_sparklines_span_the_kept_minutes() -> None:
    """Entries added per second between readings; 150 readings 2 s apart (300 s kept) make
    one line of at most 24 bars, the oldest readings averaged in, not cut off."""
    from sluice.top.history import SPARK_WIDTH, History, sparkline
    from sluice.top.sample import Sample, ServerReading, StreamReading

    history = History(seconds=300)
    for n in range(151):
        added = 10 * n if n < 75 else 750          # 5 entries/s, then none
        history.add(Sample(1000.0 + 2 * n, ServerReading("7.0", "redis", 4 * n, 0, 1, 1, {}),
                           [StreamReading("s", added, added, None)]))
    assert history.rate("s") == 0 and history.rate("") == 2.0
    rates = history.rates("s")
    assert len(rates) <= SPARK_WIDTH and rates[0] == 5.0 and rates[-1] == 0.0
    line = sparkline(rates)
    assert len(line) == len(rates) and line[0] == "█" and line[-1] == "▁"
    assert sparkline([]) == "" and sparkline([0, 0]) == "▁▁"
