"""A Spark standalone cluster on loopback, from the PySpark install (for tests and trying things out).

``with StandaloneCluster(cores=2) as url: ...`` starts a master and one worker with
``bin/spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker`` of the installed
PySpark, on 127.0.0.1 and free ports, waits until the worker has registered, yields the master URL
(``spark://127.0.0.1:PORT``) and stops both - also when the body fails. Their logs go to files in
``log_dir`` (the path is in :attr:`StandaloneCluster.log_dir`).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from .spark import SparkSetupError, find_java

__all__ = ["StandaloneCluster", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    def __init__(self, cores: int = 2, memory: str = "1g", log_dir: str | None = None, timeout_s: float = 90) -> None:
        self.cores = cores
        self.memory = memory
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="groupspec-standalone-"))
        self.timeout_s = timeout_s
        self.procs: list[subprocess.Popen[bytes]] = []
        self.url = ""

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["JAVA_HOME"] = find_java().home
        env["SPARK_HOME"] = str(_spark_home())
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        env["SPARK_LOG_DIR"] = str(self.log_dir)
        env["SPARK_WORKER_DIR"] = str(self.log_dir / "work")
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        return env

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.log_dir / f"{name}.log", "wb")
        cmd = [str(_spark_home() / "bin" / "spark-class"), *args]
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self._env(), start_new_session=True)
        log.close()
        self.procs.append(p)
        return p

    def _wait_for(self, name: str, text: str) -> None:
        deadline = time.monotonic() + self.timeout_s
        path = self.log_dir / f"{name}.log"
        while time.monotonic() < deadline:
            if path.exists() and text in path.read_text(errors="replace"):
                return
            for p in self.procs:
                if p.poll() is not None:
                    raise SparkSetupError(f"standalone {name} exited (status {p.returncode}); see {path}")
            time.sleep(0.3)
        raise SparkSetupError(f"standalone {name} not ready after {self.timeout_s:.0f} s; see {path}")

    def __enter__(self) -> str:
        port, ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{port}"
        try:
            self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                                   "--webui-port", str(ui)])
            self._wait_for("master", "I have been elected leader")
            self._start("worker", ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                                   "--port", str(free_port()), "--webui-port", str(free_port()), "--cores",
                                   str(self.cores), "--memory", self.memory, "--work-dir", str(self.log_dir / "work")])
            self._wait_for("worker", "Successfully registered with master")
        except BaseException:
            self.stop()
            raise
        return self.url

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
        self.procs.clear()

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
