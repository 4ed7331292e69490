package groupspec.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kafka's server-side assignors of the consumer protocol (KIP-848: {@code UniformAssignor}, {@code RangeAssignor}
 * from the pinned kafka-group-coordinator jar), one assignment per input line, as the coordinator calls them
 * ({@code TargetAssignmentBuilder}: the group spec with every member's subscription and current target, the
 * subscription type, the inverted target, and a topic describer over a metadata image).
 *
 * <p>In: one JSON object a line, {@code {"assignor": "uniform"|"range", "partitions": {topic: count},
 * "members": {id: {"topics": [...], "current": {topic: [partition, ...]}}}}}. Out: one JSON object a line,
 * {@code {id: {topic: [partition, ...]}}} (topics and partitions sorted; members with nothing get {}), or
 * {@code {"error": "..."}}. "ready" is printed first; "quit" (or end of input) stops it.
 */
public final class ServerAssignors {
    private ServerAssignors() {
    }

    static Uuid topicId(String name) {  // the same stable ids as the oracle's (groupspec.kafka.oracle.Shard)
        // a name-based (type 3) UUID: stable, distinct per name, never one of Kafka's reserved ids (0 and 1); the
        // earlier hash with its low bit forced to 1 gave "t0" and "t1" the same id
        java.util.UUID u = java.util.UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    static String assign(ObjectMapper json, JsonNode in) throws Exception {
        ConsumerGroupPartitionAssignor assignor = in.get("assignor").asText().equals("range")
            ? new RangeAssignor() : new UniformAssignor();
        Map<String, Uuid> ids = new TreeMap<>();
        Map<Uuid, String> names = new HashMap<>();
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        for (Iterator<Map.Entry<String, JsonNode>> it = in.get("partitions").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> t = it.next();
            Uuid id = topicId(t.getKey());
            ids.put(t.getKey(), id);
            names.put(id, t.getKey());
            delta.replay(new TopicRecord().setName(t.getKey()).setTopicId(id));
            for (int p = 0; p < t.getValue().asInt(); p++) {
                delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(List.of(1))
                    .setIsr(List.of(1)).setLeader(1).setLeaderEpoch(0).setPartitionEpoch(0));
            }
        }
        KRaftCoordinatorMetadataImage image = new KRaftCoordinatorMetadataImage(delta.apply(MetadataProvenance.EMPTY));
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<Set<Uuid>> distinct = new HashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = in.get("members").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> m = it.next();
            Set<Uuid> subscribed = new HashSet<>();
            for (JsonNode t : m.getValue().path("topics")) {
                Uuid id = ids.get(t.asText());
                if (id != null) subscribed.add(id);  // the coordinator resolves names against the metadata
            }
            distinct.add(subscribed);
            Map<Uuid, Set<Integer>> current = new HashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> ct = m.getValue().path("current").fields(); ct.hasNext(); ) {
                Map.Entry<String, JsonNode> t = ct.next();
                Uuid id = ids.get(t.getKey());
                if (id == null) continue;
                Set<Integer> ps = new HashSet<>();
                for (JsonNode p : t.getValue()) {
                    ps.add(p.asInt());
                    inverted.computeIfAbsent(id, k -> new HashMap<>()).put(p.asInt(), m.getKey());
                }
                current.put(id, ps);
            }
            members.put(m.getKey(), new MemberSubscriptionAndAssignmentImpl(Optional.empty(), Optional.empty(),
                subscribed, new Assignment(current)));
        }
        SubscriptionType type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        GroupAssignment out = assignor.assign(new GroupSpecImpl(members, type, inverted),
            new SubscribedTopicDescriberImpl(image));
        ObjectNode result = json.createObjectNode();
        for (String member : new TreeSet<>(members.keySet())) {
            ObjectNode per = result.putObject(member);
            MemberAssignment a = out.members().get(member);
            if (a == null) continue;
            Map<String, Set<Integer>> sorted = new TreeMap<>();
            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                if (!e.getValue().isEmpty()) sorted.put(names.get(e.getKey()), new TreeSet<>(e.getValue()));
            }
            for (Map.Entry<String, Set<Integer>> e : sorted.entrySet()) {
                var arr = per.putArray(e.getKey());
                for (int p : e.getValue()) arr.add(p);
            }
        }
        return json.writeValueAsString(result);
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        System.out.flush();
        for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
            String answer;
            try {
                answer = assign(json, json.readTree(line));
            } catch (Exception e) {
                ObjectNode err = json.createObjectNode();
                err.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                answer = json.writeValueAsString(err);
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
