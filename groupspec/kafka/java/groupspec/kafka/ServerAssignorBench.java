package groupspec.kafka;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Timing of Kafka's server-side assignors (KIP-848 {@code UniformAssignor}, {@code RangeAssignor} from the pinned
 * kafka-group-coordinator jar) on large homogeneous groups built inside the JVM, so that no input crosses the pipe:
 * the bench (bench/bench_assignors.py --server) interleaves these runs with groupspec's. Only the call
 * {@code assignor.assign(groupSpec, topicDescriber)} is timed, with the group spec and metadata image built as the
 * coordinator's {@code TargetAssignmentBuilder} builds them (as {@link ServerAssignors} does for one JSON case).
 *
 * <p>Commands, one a line ("ready" first; "quit" or end of input stops it):
 * <pre>
 * shape TOPICS PARTITIONS MEMBERS  topics topic0.., each with PARTITIONS partitions; members consumer0.. all
 *                                  subscribed to every topic                                   -> "ok"
 * prepare ASSIGNOR                 (uniform|range) step "fresh": no current target; step "join": member
 *                                  consumerMEMBERS joins, the others' current target is Java's own fresh result -> "ok"
 * run ASSIGNOR STEP                one timed assignment by a new assignor object -> "run WALL THREAD_CPU PROCESS_CPU GC"
 * digest ASSIGNOR STEP             SHA-256 of the step's result ("member:topic-p,topic-p,;" in member order, each list
 *                                  sorted by topic then partition), partitions moved from the fresh result, and the
 *                                  smallest and largest member load -> "digest HEX MOVED MIN MAX"
 * </pre>
 */
public final class ServerAssignorBench {
    static final String[] STEPS = {"fresh", "join"};

    private Map<String, Uuid> ids = new TreeMap<>();
    private Map<Uuid, String> names = new HashMap<>();
    private SubscribedTopicDescriberImpl describer;
    private int members;
    private final Map<String, GroupSpecImpl[]> specs = new HashMap<>();
    private final Map<String, GroupAssignment[]> results = new HashMap<>();

    static ConsumerGroupPartitionAssignor assignor(String name) {
        if (name.equals("range")) return new RangeAssignor();
        if (name.equals("uniform")) return new UniformAssignor();
        throw new IllegalArgumentException("unknown assignor " + name);
    }

    static int stepIndex(String step) {
        for (int i = 0; i < STEPS.length; i++) if (STEPS[i].equals(step)) return i;
        throw new IllegalArgumentException("unknown step " + step);
    }

    void shape(int topics, int partitions, int members) {
        ids = new TreeMap<>();
        names = new HashMap<>();
        specs.clear();
        results.clear();
        this.members = members;
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        for (int t = 0; t < topics; t++) {
            String name = "topic" + t;
            Uuid id = ServerAssignors.topicId(name);
            ids.put(name, id);
            names.put(id, name);
            delta.replay(new TopicRecord().setName(name).setTopicId(id));
            for (int p = 0; p < partitions; p++) {
                delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(List.of(1))
                    .setIsr(List.of(1)).setLeader(1).setLeaderEpoch(0).setPartitionEpoch(0));
            }
        }
        describer = new SubscribedTopicDescriberImpl(
            new KRaftCoordinatorMetadataImage(delta.apply(MetadataProvenance.EMPTY)));
    }

    GroupSpecImpl spec(int count, GroupAssignment current) {
        Set<Uuid> all = new HashSet<>(ids.values());
        Map<String, MemberSubscriptionAndAssignmentImpl> group = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (int i = 0; i < count; i++) {
            String m = "consumer" + i;
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            MemberAssignment had = current == null ? null : current.members().get(m);
            if (had != null) {
                for (Map.Entry<Uuid, Set<Integer>> e : had.partitions().entrySet()) {
                    owned.put(e.getKey(), new HashSet<>(e.getValue()));
                    Map<Integer, String> inv = inverted.computeIfAbsent(e.getKey(), k -> new HashMap<>());
                    for (int p : e.getValue()) inv.put(p, m);
                }
            }
            group.put(m, new MemberSubscriptionAndAssignmentImpl(Optional.empty(), Optional.empty(), all,
                new Assignment(owned)));
        }
        return new GroupSpecImpl(group, SubscriptionType.HOMOGENEOUS, inverted);
    }

    void prepare(String name) throws Exception {
        GroupSpecImpl fresh = spec(members, null);
        GroupAssignment first = assignor(name).assign(fresh, describer);
        GroupSpecImpl join = spec(members + 1, first);
        GroupAssignment second = assignor(name).assign(join, describer);
        specs.put(name, new GroupSpecImpl[] {fresh, join});
        results.put(name, new GroupAssignment[] {first, second});
    }

    Map<String, Map<Integer, String>> owners(GroupAssignment a) {
        Map<String, Map<Integer, String>> out = new HashMap<>();
        for (Map.Entry<String, MemberAssignment> m : a.members().entrySet()) {
            for (Map.Entry<Uuid, Set<Integer>> e : m.getValue().partitions().entrySet()) {
                Map<Integer, String> per = out.computeIfAbsent(names.get(e.getKey()), k -> new HashMap<>());
                for (int p : e.getValue()) per.put(p, m.getKey());
            }
        }
        return out;
    }

    String digest(String name, String step) throws Exception {
        int i = stepIndex(step);
        GroupAssignment out = results.get(name)[i];
        List<String> ms = new ArrayList<>(specs.get(name)[i].memberIds());
        Collections.sort(ms);
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        long min = Long.MAX_VALUE, max = 0;
        for (String m : ms) {
            StringBuilder sb = new StringBuilder(m).append(':');
            MemberAssignment a = out.members().get(m);
            long load = 0;
            if (a != null) {
                Map<String, Set<Integer>> sorted = new TreeMap<>();
                for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                    if (!e.getValue().isEmpty()) sorted.put(names.get(e.getKey()), new TreeSet<>(e.getValue()));
                }
                for (Map.Entry<String, Set<Integer>> e : sorted.entrySet()) {
                    for (int p : e.getValue()) sb.append(e.getKey()).append('-').append(p).append(',');
                    load += e.getValue().size();
                }
            }
            min = Math.min(min, load);
            max = Math.max(max, load);
            md.update(sb.append(';').toString().getBytes(StandardCharsets.UTF_8));
        }
        long moved = 0;
        if (i > 0) {
            Map<String, Map<Integer, String>> before = owners(results.get(name)[0]), after = owners(out);
            for (Map.Entry<String, Map<Integer, String>> t : before.entrySet()) {
                for (Map.Entry<Integer, String> p : t.getValue().entrySet()) {
                    String now = after.getOrDefault(t.getKey(), Map.of()).get(p.getKey());
                    if (now != null && !now.equals(p.getValue())) moved++;
                }
            }
        }
        return "digest " + HexFormat.of().formatHex(md.digest()) + " " + moved + " " + min + " " + max;
    }

    static long gcMillis() {
        long t = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) t += Math.max(0, g.getCollectionTime());
        return t;
    }

    public static void main(String[] args) throws Exception {
        ServerAssignorBench bench = new ServerAssignorBench();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        System.out.flush();
        for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
            String[] w = line.split(" ");
            try {
                switch (w[0]) {
                    case "shape":
                        bench.shape(Integer.parseInt(w[1]), Integer.parseInt(w[2]), Integer.parseInt(w[3]));
                        System.out.println("ok");
                        break;
                    case "prepare":
                        bench.prepare(w[1]);
                        System.out.println("ok");
                        break;
                    case "run": {
                        GroupSpecImpl spec = bench.specs.get(w[1])[stepIndex(w[2])];
                        ConsumerGroupPartitionAssignor asg = assignor(w[1]);
                        long g0 = gcMillis(), p0 = os.getProcessCpuTime(), c0 = threads.getCurrentThreadCpuTime(), w0 = System.nanoTime();
                        GroupAssignment out = asg.assign(spec, bench.describer);
                        long w1 = System.nanoTime(), c1 = threads.getCurrentThreadCpuTime(), p1 = os.getProcessCpuTime(), g1 = gcMillis();
                        out = null;
                        System.out.println("run " + (w1 - w0) / 1e9 + " " + (c1 - c0) / 1e9 + " " + (p1 - p0) / 1e9 + " " + (g1 - g0) / 1e3);
                        break;
                    }
                    case "digest":
                        System.out.println(bench.digest(w[1], w[2]));
                        break;
                    default:
                        System.out.println("error unknown command " + w[0]);
                }
            } catch (Exception | OutOfMemoryError e) {
                System.out.println("error " + e.toString().replace('\n', ' '));
            }
            System.out.flush();
        }
    }
}
