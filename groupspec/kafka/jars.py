"""The pinned Apache Kafka release: its jars from Maven Central, Java, and the project's Java programs.

Layout of the cache (``$GROUPSPEC_CACHE``, else ``$XDG_CACHE_HOME/groupspec``, else ``~/.cache/groupspec``)::

    kafka-<version>/lib/*.jar            the jars of pom.xml, resolved once by Maven
    kafka-<version>/classes-<digest>/    java/ compiled against them; the digest covers every source file

Both are written to a temporary sibling and renamed into place, under a file lock, so concurrent test workers
and an interrupted fetch never leave a half-filled directory behind.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator

#: The one Apache Kafka release groupspec follows: the broker the real-stack harness starts, the Java consumer,
#: the group coordinator the oracle drives and the server-side assignors compared with the reference's.
KAFKA_VERSION = "4.3.1"

#: The oldest Java the pinned release's broker runs on.
MIN_JAVA = 17
FETCH_TIMEOUT = 1800.0  # seconds: Maven resolving the release's jars from Maven Central (a slow mirror takes minutes)
COMPILE_TIMEOUT = 600.0  # seconds: javac on the project's Java sources

_HERE = pathlib.Path(__file__).resolve().parent
POM = _HERE / "pom.xml"
JAVA_SOURCES = _HERE / "java"


class KafkaSetupError(RuntimeError):
    """Something the machine lacks for running Apache Kafka; the message is one line saying what and how to fix."""


def cache_root() -> pathlib.Path:
    env = os.environ.get("GROUPSPEC_CACHE")
    if env:
        return pathlib.Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (pathlib.Path(xdg) if xdg else pathlib.Path.home() / ".cache") / "groupspec"


def release_dir() -> pathlib.Path:
    return cache_root() / f"kafka-{KAFKA_VERSION}"


@contextlib.contextmanager
def _locked(name: str) -> Iterator[pathlib.Path]:
    root = release_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield root
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------------- Java
def java_binary() -> str:
    """The ``java`` to run Kafka with (``$JAVA_HOME/bin/java``, else the one on PATH), at least Java 17."""
    home = os.environ.get("JAVA_HOME")
    java = str(pathlib.Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home}" if home else "PATH"
        raise KafkaSetupError(f"Java not found on {where}: Apache Kafka {KAFKA_VERSION} needs Java {MIN_JAVA} or newer "
                              "(Debian: apt-get install openjdk-17-jdk-headless)")
    major = java_major(java)
    if major < MIN_JAVA:
        raise KafkaSetupError(f"{java} is Java {major}: Apache Kafka {KAFKA_VERSION} needs Java {MIN_JAVA} or newer "
                              "(set JAVA_HOME to a newer JDK)")
    return java


def _run_reaped(cmd: list[str], timeout: float, what: str) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` to its end (its output captured) and reap it on every way out. On a Ctrl-C ``subprocess.run``
    kills the child but does not wait for it (it waits a quarter of a second for a child that it assumes got the
    SIGINT too), so a JVM or a Maven being torn down could outlive the command that started it; here the child is
    killed and waited for before the KeyboardInterrupt goes on. A child still running after ``timeout`` seconds is
    a one-line :class:`KafkaSetupError` naming ``what``."""
    with subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except BaseException as e:
            proc.kill()
            proc.wait()
            if isinstance(e, subprocess.TimeoutExpired):
                raise KafkaSetupError(f"{what} did not finish within {timeout:g} s") from None
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def java_major(java: str) -> int:
    """The major version of ``java`` (``java -version``; the JVM reaped on every way out: ``_run_reaped``)."""
    r = _run_reaped([java, "-version"], 30, f"`{java} -version`")
    stdout, stderr = r.stdout, r.stderr
    m = re.search(r'version "(\d+)(?:\.(\d+))?', stderr + stdout)
    if not m:
        raise KafkaSetupError(f"could not tell the version of {java} (`{java} -version` printed no version)")
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _javac(java: str) -> str:
    javac = pathlib.Path(java).resolve().parent / "javac"
    if javac.exists():
        return str(javac)
    found = shutil.which("javac")
    if not found:
        raise KafkaSetupError(f"javac not found beside {java} nor on PATH: groupspec compiles its Java programs "
                              "with a JDK (Debian: apt-get install openjdk-17-jdk-headless)")
    return found


# ---------------------------------------------------------------------------------------------------- jars
def jars_dir() -> pathlib.Path:
    return release_dir() / "lib"


def pom_digest() -> str:
    """What the fetched jars were resolved from: a cache fetched from another pom.xml is fetched again."""
    return hashlib.sha256(POM.read_bytes()).hexdigest()[:16]


def have_jars() -> bool:
    try:
        first = (jars_dir() / ".complete").read_text().split("\n", 1)[0]
    except OSError:
        return False
    return first == f"pom {pom_digest()}"


def ensure_jars(fetch: bool = True, log: Callable[[str], None] | None = None) -> pathlib.Path:
    """The directory holding the pinned release's jars; resolves them from Maven Central on first use."""
    if have_jars():
        return jars_dir()
    if not fetch:
        raise KafkaSetupError(f"Apache Kafka {KAFKA_VERSION}'s jars are not fetched yet: run "
                              "`python -m groupspec.kafka fetch` (make setup does)")
    mvn = shutil.which("mvn")
    if not mvn:
        raise KafkaSetupError(f"Maven (mvn) not found: it resolves Apache Kafka {KAFKA_VERSION}'s jars from Maven "
                              "Central (Debian: apt-get install maven)")
    with _locked("fetch") as root:
        if have_jars():
            return jars_dir()
        if log:
            log(f"fetching Apache Kafka {KAFKA_VERSION}'s jars from Maven Central into {jars_dir()} (once)")
        started = time.monotonic()
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=".lib-", dir=root))
        try:
            cmd = [mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies", f"-Dkafka.version={KAFKA_VERSION}",
                   "-DincludeScope=runtime", f"-DoutputDirectory={tmp}"]
            r = _run_reaped(cmd, FETCH_TIMEOUT, "Maven's fetch of the jars")
            if r.returncode != 0:
                tail = " ".join((r.stdout + r.stderr).split())[-300:]
                raise KafkaSetupError(f"Maven could not resolve Apache Kafka {KAFKA_VERSION}'s jars (is Maven Central "
                                      f"reachable?): {tail}")
            jars = sorted(p.name for p in tmp.glob("*.jar"))
            if not any(n.startswith(f"kafka_2.13-{KAFKA_VERSION}") for n in jars):
                raise KafkaSetupError(f"Maven ran but kafka_2.13-{KAFKA_VERSION}.jar is not among the jars it fetched")
            (tmp / ".complete").write_text(f"pom {pom_digest()}\n" + "\n".join(jars) + "\n")
            shutil.rmtree(jars_dir(), ignore_errors=True)
            tmp.rename(jars_dir())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if log:
            log(f"fetched {len(jars)} jars in {time.monotonic() - started:.1f} s")
    return jars_dir()


# ------------------------------------------------------------------------------------------------ classes
def _sources() -> list[pathlib.Path]:
    return sorted(JAVA_SOURCES.rglob("*.java")) if JAVA_SOURCES.exists() else []


def sources_digest() -> str:
    h = hashlib.sha256(KAFKA_VERSION.encode() + pom_digest().encode())
    for src in _sources():
        h.update(str(src.relative_to(JAVA_SOURCES)).encode() + b"\0" + src.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def compiled_classes(fetch: bool = True, log: Callable[[str], None] | None = None) -> pathlib.Path:
    """The project's Java programs (java/) compiled against the pinned jars; compiled once per source version."""
    lib = ensure_jars(fetch=fetch, log=log)
    out = release_dir() / f"classes-{sources_digest()}"
    if (out / ".complete").exists():
        return out
    java = java_binary()
    javac = _javac(java)
    with _locked("compile") as root:
        if (out / ".complete").exists():
            return out
        sources = _sources()
        if log:
            log(f"compiling groupspec's {len(sources)} Java sources against Apache Kafka {KAFKA_VERSION}")
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=".classes-", dir=root))
        try:
            if sources:
                r = _run_reaped([javac, "-nowarn", "-encoding", "UTF-8", "--release", str(MIN_JAVA),
                                 "-cp", f"{lib}/*", "-d", str(tmp), *map(str, sources)], COMPILE_TIMEOUT,
                                "javac on groupspec's Java sources")
                if r.returncode != 0:
                    first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:300])
                    raise KafkaSetupError(f"javac failed on groupspec's Java sources: {first}")
            (tmp / ".complete").write_text(sources_digest() + "\n")
            shutil.rmtree(out, ignore_errors=True)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def classpath(fetch: bool = True, log: Callable[[str], None] | None = None) -> str:
    """The class path for ``java -cp``: the project's compiled classes, then every jar of the pinned release."""
    classes = compiled_classes(fetch=fetch, log=log)
    return f"{classes}{os.pathsep}{jars_dir()}/*"
