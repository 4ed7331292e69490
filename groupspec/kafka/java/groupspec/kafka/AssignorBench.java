package groupspec.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Kafka's client-side assignors (range, roundrobin, sticky, cooperative-sticky from the pinned kafka-clients jar)
 * driven over stdin, one command per line, so a benchmark can interleave Java's runs with groupspec's in one run:
 *
 * <pre>
 * shape uniform|nonequal TOPICS PARTITIONS CONSUMERS   the group (uniform: everyone on every topic; nonequal:
 *                                                      consumer i with i % 4 == 0 on the first half of the topics,
 *                                                      the others on the second half)          -> "ok"
 * prepare ASSIGNOR      the inputs of the three steps, each from this assignor's own previous result:
 *                       fresh (nothing owned); second (everyone owns its fresh result at generation 1,
 *                       consumer0 owns nothing); add (everyone owns its second result at generation 2, consumer0
 *                       nothing, one new consumer)                                             -> "ok"
 * run ASSIGNOR STEP     one assignment of that step's input by a new assignor object
 *                       -> "run WALL THREAD_CPU PROCESS_CPU GC" (seconds)
 * digest ASSIGNOR STEP  SHA-256 of the step's result from prepare, members sorted, each list sorted by
 *                       (topic, partition): "member:topic-p,topic-p,;"                          -> "digest HEX"
 * case JSON             one assignment of a group given as JSON ({"assignor", "partitions": {topic: n},
 *                       "racks": {topic: [[rack, ...] per partition]} or absent, "members": {id: {"topics",
 *                       "owned": [[topic, p]], "generation", "instance_id", "rack"}}})
 *                       -> one JSON line {member: [[topic, p], ...]} (lists sorted as above)
 * quit
 * </pre>
 */
public final class AssignorBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] STEPS = {"fresh", "second", "add"};

    private final Map<String, Integer> partitions = new HashMap<>();
    private final List<String> topics = new ArrayList<>();
    private final Map<String, List<String>> topicsOf = new LinkedHashMap<>();
    private String kind;
    private int consumers;
    private final Map<String, Map<String, Subscription>[]> inputs = new HashMap<>();
    private final Map<String, Map<String, List<TopicPartition>>[]> results = new HashMap<>();

    private AssignorBench() {}

    static AbstractPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    private List<String> subscribedTopics(int i) {
        if (kind.equals("uniform")) return topics;
        int half = topics.size() / 2;
        return i % 4 == 0 ? topics.subList(0, half) : topics.subList(half, topics.size());
    }

    void shape(String kind, int nTopics, int nPartitions, int consumers) {
        this.kind = kind;
        this.consumers = consumers;
        partitions.clear();
        topics.clear();
        topicsOf.clear();
        inputs.clear();
        results.clear();
        for (int t = 0; t < nTopics; t++) {
            partitions.put("topic" + t, nPartitions);
            topics.add("topic" + t);
        }
        for (int c = 0; c < consumers; c++) topicsOf.put("consumer" + c, subscribedTopics(c));
    }

    /** A subscription that owns ``owned`` at ``generation``, as the client would send it for this assignor. */
    static Subscription owning(String assignor, String member, List<String> topics, List<TopicPartition> owned, int generation) {
        ByteBuffer userData = null;
        if (assignor.equals("sticky")) {  // eager: what the member owned travels in its user data
            StickyAssignor client = new StickyAssignor();
            client.onAssignment(new Assignment(owned), new ConsumerGroupMetadata("g", generation, member, Optional.empty()));
            userData = client.subscriptionUserData(new HashSet<>(topics));
        }
        return new Subscription(topics, userData, owned, generation, Optional.empty());
    }

    @SuppressWarnings("unchecked")
    void prepare(String name) {
        Map<String, Subscription>[] in = new Map[3];
        Map<String, List<TopicPartition>>[] out = new Map[3];
        in[0] = new HashMap<>();
        for (Map.Entry<String, List<String>> e : topicsOf.entrySet()) in[0].put(e.getKey(), new Subscription(e.getValue()));
        out[0] = assignor(name).assign(partitions, in[0]);
        for (int step = 1; step < 3; step++) {
            in[step] = new HashMap<>();
            for (Map.Entry<String, List<String>> e : topicsOf.entrySet()) {
                String m = e.getKey();
                List<TopicPartition> owned = m.equals("consumer0") ? List.of() : out[step - 1].get(m);
                in[step].put(m, owning(name, m, e.getValue(), owned, step));
            }
            if (step == 2) in[2].put("consumer" + consumers, new Subscription(subscribedTopics(consumers)));
            out[step] = assignor(name).assign(partitions, in[step]);
        }
        inputs.put(name, in);
        results.put(name, out);
    }

    static int stepIndex(String step) {
        int i = Arrays.asList(STEPS).indexOf(step);
        if (i < 0) throw new IllegalArgumentException("unknown step " + step);
        return i;
    }

    static long gcMillis() {
        long t = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) t += Math.max(0, g.getCollectionTime());
        return t;
    }

    static List<TopicPartition> sorted(List<TopicPartition> parts) {
        List<TopicPartition> out = new ArrayList<>(parts);
        out.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        return out;
    }

    static String digest(Map<String, List<TopicPartition>> out) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        List<String> members = new ArrayList<>(out.keySet());
        Collections.sort(members);
        for (String m : members) {
            StringBuilder sb = new StringBuilder(m).append(':');
            for (TopicPartition tp : sorted(out.get(m))) sb.append(tp.topic()).append('-').append(tp.partition()).append(',');
            md.update(sb.append(';').toString().getBytes(StandardCharsets.UTF_8));
        }
        return HexFormat.of().formatHex(md.digest());
    }

    static String runCase(String json) throws Exception {
        JsonNode c = JSON.readTree(json);
        String name = c.get("assignor").asText();
        Map<String, Integer> ppt = new HashMap<>();
        c.get("partitions").fields().forEachRemaining(e -> ppt.put(e.getKey(), e.getValue().asInt()));
        Map<String, Subscription> subs = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = c.get("members").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode s = e.getValue();
            List<String> ts = new ArrayList<>();
            if (s.has("topics")) s.get("topics").forEach(t -> ts.add(t.asText()));
            List<TopicPartition> owned = new ArrayList<>();
            if (s.has("owned")) s.get("owned").forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
            int generation = s.has("generation") ? s.get("generation").asInt() : -1;
            Optional<String> rack = s.hasNonNull("rack") ? Optional.of(s.get("rack").asText()) : Optional.empty();
            Subscription sub = new Subscription(ts, null, owned, generation, rack);
            if (s.hasNonNull("instance_id")) sub.setGroupInstanceId(Optional.of(s.get("instance_id").asText()));
            subs.put(e.getKey(), sub);
        }
        AbstractPartitionAssignor a = assignor(name);
        Map<String, List<TopicPartition>> out;
        if (c.hasNonNull("racks")) {
            Map<String, Integer> nodeIds = new HashMap<>();
            Node noRack = new Node(1_000_000, "host", 9092);
            Map<String, List<PartitionInfo>> infos = new HashMap<>();
            for (Map.Entry<String, Integer> e : ppt.entrySet()) {
                JsonNode rows = c.get("racks").get(e.getKey());
                List<PartitionInfo> list = new ArrayList<>();
                for (int p = 0; p < e.getValue(); p++) {
                    List<Node> replicas = new ArrayList<>();
                    if (rows != null && p < rows.size()) {
                        for (JsonNode r : rows.get(p)) {
                            if (r.isNull()) continue;
                            String rack = r.asText();
                            int id = nodeIds.computeIfAbsent(rack, k -> nodeIds.size());
                            replicas.add(new Node(id, "host" + id, 9092, rack));
                        }
                    }
                    if (replicas.isEmpty()) replicas.add(noRack);
                    Node[] rs = replicas.toArray(new Node[0]);
                    list.add(new PartitionInfo(e.getKey(), p, rs[0], rs, rs));
                }
                infos.put(e.getKey(), list);
            }
            out = a.assignPartitions(infos, subs);
        } else {
            out = a.assign(ppt, subs);
        }
        ObjectNode result = JSON.createObjectNode();
        for (String m : subs.keySet()) {
            ArrayNode arr = result.putArray(m);
            for (TopicPartition tp : sorted(out.getOrDefault(m, List.of()))) arr.addArray().add(tp.topic()).add(tp.partition());
        }
        return JSON.writeValueAsString(result);
    }

    public static void main(String[] args) throws Exception {
        AssignorBench bench = new AssignorBench();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        System.out.flush();
        for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
            String[] w = line.split(" ", 2);
            try {
                switch (w[0]) {
                    case "shape": {
                        String[] a = w[1].split(" ");
                        bench.shape(a[0], Integer.parseInt(a[1]), Integer.parseInt(a[2]), Integer.parseInt(a[3]));
                        System.out.println("ok");
                        break;
                    }
                    case "prepare":
                        bench.prepare(w[1]);
                        System.out.println("ok");
                        break;
                    case "run": {
                        String[] a = w[1].split(" ");
                        Map<String, Subscription> subs = bench.inputs.get(a[0])[stepIndex(a[1])];
                        AbstractPartitionAssignor asg = assignor(a[0]);
                        long g0 = gcMillis(), p0 = os.getProcessCpuTime(), c0 = threads.getCurrentThreadCpuTime(), w0 = System.nanoTime();
                        Map<String, List<TopicPartition>> out = asg.assign(bench.partitions, subs);
                        long w1 = System.nanoTime(), c1 = threads.getCurrentThreadCpuTime(), p1 = os.getProcessCpuTime(), g1 = gcMillis();
                        out = null;
                        System.out.println("run " + (w1 - w0) / 1e9 + " " + (c1 - c0) / 1e9 + " " + (p1 - p0) / 1e9 + " " + (g1 - g0) / 1e3);
                        break;
                    }
                    case "digest": {
                        String[] a = w[1].split(" ");
                        System.out.println("digest " + digest(bench.results.get(a[0])[stepIndex(a[1])]));
                        break;
                    }
                    case "case":
                        System.out.println(runCase(w[1]));
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
