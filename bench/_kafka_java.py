"""Kafka's Java sticky assignors, compiled from Kafka's source at benchmark time (for bench_assignors [1c]).

Nothing here is Kafka's code: given a Kafka source tree (a checkout, or a git directory from which
``git archive`` extracts the files), :func:`build` copies the assignor classes and the classes they
need from ``clients/src/main/java`` into a temporary directory and compiles them with ``javac``,
together with a small timing harness (:data:`HARNESS`). Classes the assignors only reference on paths
a fresh ``assign`` never takes (serialisation of records, class loading by name, the consumer's group
metadata, logging) are replaced by *stand-ins* that have the referenced signatures and throw if
called (:data:`STAND_INS`), so a stand-in can never be part of what is measured. Kafka's build (Gradle,
generated message classes, Maven dependencies) is not needed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

MAIN = "clients/src/main/java"
KAFKA_FILES = [
    "org/apache/kafka/clients/consumer/CooperativeStickyAssignor.java",
    "org/apache/kafka/clients/consumer/StickyAssignor.java",
    "org/apache/kafka/clients/consumer/ConsumerPartitionAssignor.java",
    "org/apache/kafka/clients/consumer/internals/AbstractStickyAssignor.java",
    "org/apache/kafka/clients/consumer/internals/AbstractPartitionAssignor.java",
    "org/apache/kafka/clients/consumer/internals/Utils.java",
    "org/apache/kafka/common/TopicPartition.java",
    "org/apache/kafka/common/PartitionInfo.java",
    "org/apache/kafka/common/Node.java",
    "org/apache/kafka/common/Cluster.java",
    "org/apache/kafka/common/ClusterResource.java",
    "org/apache/kafka/common/Configurable.java",
    "org/apache/kafka/common/KafkaException.java",
    "org/apache/kafka/common/TopicIdPartition.java",
    "org/apache/kafka/common/Uuid.java",
    "org/apache/kafka/common/utils/CollectionUtils.java",
    "org/apache/kafka/common/utils/ByteUtils.java",
    "org/apache/kafka/common/protocol/Writable.java",
]
KAFKA_DIRS = ["org/apache/kafka/common/protocol/types"]

_U = 'throw new UnsupportedOperationException("stand-in: not on the assignment path");'
STAND_INS = {
    "org/slf4j/Logger.java": """package org.slf4j;
public interface Logger {
  default boolean isTraceEnabled() { return false; }
  default boolean isDebugEnabled() { return false; }
  default boolean isInfoEnabled() { return false; }
  default void trace(String m, Object... a) {}
  default void debug(String m, Object... a) {}
  default void info(String m, Object... a) {}
  default void warn(String m, Object... a) {}
  default void error(String m, Object... a) {}
}
""",
    "org/slf4j/LoggerFactory.java": """package org.slf4j;
public final class LoggerFactory {
  private static final Logger NOP = new Logger() {};
  public static Logger getLogger(Class<?> c) { return NOP; }
  public static Logger getLogger(String n) { return NOP; }
}
""",
    "org/apache/kafka/common/utils/Utils.java": f"""package org.apache.kafka.common.utils;
import java.nio.ByteBuffer;
public final class Utils {{
  public static String utf8(ByteBuffer buffer, int length) {{ {_U} }}
  public static byte[] utf8(String string) {{ {_U} }}
  public static int utf8Length(CharSequence s) {{ {_U} }}
  public static byte[] toArray(ByteBuffer buffer) {{ {_U} }}
  public static <T> T newInstance(Class<T> c) {{ {_U} }}
  public static <T> Class<? extends T> loadClass(String klass, Class<T> base) throws ClassNotFoundException {{ {_U} }}
}}
""",
    "org/apache/kafka/common/record/BaseRecords.java": """package org.apache.kafka.common.record;
public interface BaseRecords { int sizeInBytes(); }
""",
    "org/apache/kafka/common/record/MemoryRecords.java": f"""package org.apache.kafka.common.record;
import java.nio.ByteBuffer;
public class MemoryRecords implements BaseRecords {{
  public int sizeInBytes() {{ {_U} }}
  public ByteBuffer buffer() {{ {_U} }}
  public static MemoryRecords readableRecords(ByteBuffer buffer) {{ {_U} }}
}}
""",
    "org/apache/kafka/common/record/UnalignedMemoryRecords.java": f"""package org.apache.kafka.common.record;
import java.nio.ByteBuffer;
public class UnalignedMemoryRecords implements BaseRecords {{
  public int sizeInBytes() {{ {_U} }}
  public ByteBuffer buffer() {{ {_U} }}
}}
""",
    "org/apache/kafka/common/protocol/MessageUtil.java": """package org.apache.kafka.common.protocol;
public final class MessageUtil {
  public static final long UNSIGNED_INT_MAX = 4294967295L;
  public static final int UNSIGNED_SHORT_MAX = 65535;
}
""",
    "org/apache/kafka/clients/consumer/ConsumerGroupMetadata.java": f"""package org.apache.kafka.clients.consumer;
public class ConsumerGroupMetadata {{
  public int generationId() {{ {_U} }}
}}
""",
}

# The harness: Kafka's uniform large shape (topics x partitions, every consumer on every topic, nothing
# owned), kept in one JVM that takes commands on stdin so the benchmark can interleave Java's runs with
# groupspec's: "run ASSIGNOR" makes one fresh assignment with a new assignor object and prints the wall
# time, this thread's CPU time, the process's CPU time (JIT and GC threads too) and the collectors' time;
# "digest" prints a SHA-256 of the last result in member order (member:topic-partition,...;); "quit" ends.
HARNESS = """import java.io.*;
import java.util.*;
import java.lang.management.*;
import java.security.MessageDigest;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.common.TopicPartition;
public class FreshBench {
  static long gcMillis() { long t = 0; for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) t += Math.max(0, g.getCollectionTime()); return t; }
  public static void main(String[] a) throws Exception {
    int topics = Integer.parseInt(a[0]), parts = Integer.parseInt(a[1]), consumers = Integer.parseInt(a[2]);
    Map<String, Integer> ppt = new HashMap<>();
    List<String> names = new ArrayList<>();
    for (int t = 0; t < topics; t++) { ppt.put("topic" + t, parts); names.add("topic" + t); }
    Map<String, Subscription> subs = new HashMap<>();
    for (int c = 0; c < consumers; c++) subs.put("consumer" + c, new Subscription(names));
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    Map<String, List<TopicPartition>> out = null;
    System.out.println("ready");
    for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
      if (line.startsWith("run ")) {
        out = null;
        AbstractStickyAssignor asg = line.equals("run sticky") ? new StickyAssignor() : new CooperativeStickyAssignor();
        long g0 = gcMillis(), p0 = os.getProcessCpuTime(), c0 = bean.getCurrentThreadCpuTime(), w0 = System.nanoTime();
        out = asg.assign(ppt, subs);
        long w1 = System.nanoTime(), c1 = bean.getCurrentThreadCpuTime(), p1 = os.getProcessCpuTime(), g1 = gcMillis();
        System.out.println("run " + (w1 - w0) / 1e9 + " " + (c1 - c0) / 1e9 + " " + (p1 - p0) / 1e9 + " " + (g1 - g0) / 1e3);
      } else if (line.equals("digest")) {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        List<String> ms = new ArrayList<>(out.keySet());
        Collections.sort(ms);
        for (String m : ms) {
          StringBuilder sb = new StringBuilder(m).append(':');
          for (TopicPartition tp : out.get(m)) sb.append(tp.topic()).append('-').append(tp.partition()).append(',');
          md.update(sb.append(';').toString().getBytes("UTF-8"));
        }
        System.out.println("digest " + HexFormat.of().formatHex(md.digest()));
      }
      System.out.flush();
    }
  }
}
"""


class Unavailable(Exception):
    """Kafka's Java assignors cannot be run here (the reason is the message)."""


def _extract(source: Path, dest: Path) -> str:
    """Copy the needed Kafka files into ``dest``; returns a description of the source (commit if known)."""
    paths = [f"{MAIN}/{f}" for f in KAFKA_FILES] + [f"{MAIN}/{d}" for d in KAFKA_DIRS]
    if (source / MAIN).is_dir():
        for p in paths:
            src = source / p
            if not src.exists():
                raise Unavailable(f"{src} is missing (another Kafka version?)")
            target = dest / p[len(MAIN) + 1:]
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy)(src, target)
        return str(source)
    git = shutil.which("git")
    if git is None:
        raise Unavailable(f"{source} is not a Kafka source tree, and git is not installed to read it as a git directory")
    rev = subprocess.run([git, "--git-dir", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if rev.returncode != 0:
        raise Unavailable(f"{source} is neither a Kafka source tree nor a git directory")
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run([git, "--git-dir", str(source), "archive", "HEAD", *paths], capture_output=True)
        if archive.returncode != 0:
            raise Unavailable(f"git archive of {source} failed: {archive.stderr.decode(errors='replace').strip()[:200]}")
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        shutil.copytree(Path(tmp) / MAIN, dest, dirs_exist_ok=True)
    return f"{source} at commit {rev.stdout.strip()}"


class JavaAssignors:
    """Kafka's sticky assignors compiled into a temporary directory (removed by :meth:`close`)."""

    def __init__(self, source: str | None) -> None:
        self.java, javac = shutil.which("java"), shutil.which("javac")
        self.proc: subprocess.Popen[str] | None = None
        if not source:
            raise Unavailable("no Kafka source given (--kafka-source DIR or GROUPSPEC_KAFKA_SOURCE)")
        if self.java is None or javac is None:
            raise Unavailable("java and javac are not both on PATH")
        self.dir = Path(tempfile.mkdtemp(prefix="groupspec-kafka-java-"))
        try:
            src, stand, classes = self.dir / "src", self.dir / "stand", self.dir / "classes"
            for d in (src, stand, classes):
                d.mkdir()
            self.source = _extract(Path(source), src)
            for rel, text in STAND_INS.items():
                (stand / rel).parent.mkdir(parents=True, exist_ok=True)
                (stand / rel).write_text(text)
            (self.dir / "FreshBench.java").write_text(HARNESS)
            out = subprocess.run([javac, "-nowarn", "-d", str(classes), "-sourcepath", f"{src}{os.pathsep}{stand}",
                                  str(self.dir / "FreshBench.java")], capture_output=True, text=True)
            if out.returncode != 0:
                raise Unavailable("javac failed: " + " | ".join(out.stderr.strip().splitlines()[:3]))
            self.classes = classes
            self.version = subprocess.run([self.java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        except BaseException:
            self.close()
            raise

    def start(self, topics: int, partitions: int, consumers: int) -> None:
        """Start the harness JVM on Kafka's uniform shape of these sizes (one JVM for all runs)."""
        self.proc = subprocess.Popen([self.java, "-Xmx4g", "-cp", str(self.classes), "FreshBench", str(topics), str(partitions),
                                      str(consumers)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._expect("ready")

    def _expect(self, head: str) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(head):
            err = self.proc.stderr.read() if self.proc.poll() is not None and self.proc.stderr else ""
            raise Unavailable("the Java harness failed: " + " | ".join((line + err).strip().splitlines()[:3]))
        return line

    def _send(self, command: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def run(self, assignor: str) -> tuple[float, float, float, float]:
        """One fresh assignment by Kafka's ``assignor``: (wall, thread CPU, process CPU, GC) seconds."""
        self._send(f"run {assignor}")
        wall, thread, process, gc = (float(x) for x in self._expect("run ").split()[1:])
        return wall, thread, process, gc

    def digest(self) -> str:
        """SHA-256 of the last run's result, in the form of :func:`bench_assignors.assignment_digest`."""
        self._send("digest")
        return self._expect("digest ").split()[1]

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self._send("quit")
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
