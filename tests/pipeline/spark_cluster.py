"""A standalone Spark cluster on this machine for the tests that need more than one host:
a master on 127.0.0.1 and workers on 127.0.0.2, 127.0.0.3... (Linux routes all of
127.0.0.0/8 to loopback). Spark starts a speculative copy of a task only on a host where
no attempt of it runs, and local or local-cluster masters have one host ("localhost"):
workers on distinct loopback addresses are distinct hosts to the scheduler.

    with SparkCluster(workers=2) as cluster:
        SparkSession.builder.master(cluster.url)...
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import List

import pyspark

from examples.processes import free_port

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT_S = 180.0     # JVMs start slowly on a busy two-core machine


class SparkCluster:
    """Master and workers as child processes (`spark-class`), logging into `log_dir`;
    stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, log_dir: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> None:
        self.log_dir = log_dir
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.hosts = [f"127.0.0.{2 + n}" for n in range(workers)]
        self.cores, self.memory = cores, memory
        self.processes: List[subprocess.Popen] = []

    def _start(self, name: str, *args: str) -> None:
        env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(self.log_dir)}
        log = open(self.log_dir / f"{name}.log", "wb")
        self.processes.append(subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args],
                                               env=env, stdout=log, stderr=subprocess.STDOUT))
        log.close()

    def __enter__(self) -> "SparkCluster":
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(free_port()))
        for host in self.hosts:
            self._start(f"worker-{host}", "org.apache.spark.deploy.worker.Worker", "--host", host,
                        "--cores", str(self.cores), "--memory", self.memory,
                        "--webui-port", str(free_port()), "--work-dir", str(self.log_dir / f"work-{host}"),
                        self.url)
        self._wait_for_workers()
        return self

    def _wait_for_workers(self) -> None:
        """Until the master's log has registered every worker (a job submitted before
        would run on fewer hosts)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        master_log = self.log_dir / "master.log"
        while time.monotonic() < deadline:
            if any(process.poll() is not None for process in self.processes):
                break
            registered = master_log.read_text(errors="replace").count("Registering worker")
            if registered >= len(self.hosts):
                return
            time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the Spark cluster did not start; see {self.log_dir}")

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()
