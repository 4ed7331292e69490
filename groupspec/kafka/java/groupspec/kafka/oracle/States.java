package groupspec.kafka.oracle;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.Group;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.GroupMetadataManager;
import org.apache.kafka.coordinator.group.classic.ClassicGroup;
import org.apache.kafka.coordinator.group.classic.ClassicGroupMember;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;

import java.lang.reflect.Field;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** The group as Kafka's coordinator holds it, for the state line after each op. */
final class States {
    private static final Field MANAGER;

    static {
        try {
            MANAGER = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
            MANAGER.setAccessible(true);
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private States() {}

    static ObjectNode describe(Oracle oracle, String groupId) {
        ObjectNode s = Oracle.JSON.createObjectNode();
        Shard shard = oracle.shard();
        s.put("timers", shard.timers());
        s.put("store_armed", shard.storeArmed());
        if (shard.shard == null) {
            s.put("type", "unloaded");
            return s;
        }
        Group group;
        try {
            GroupMetadataManager manager = (GroupMetadataManager) MANAGER.get(shard.shard);
            group = manager.group(groupId);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            s.putNull("type");
            return s;
        }
        if (group instanceof ClassicGroup g) {
            s.put("type", "classic");
            s.put("state", g.currentState().toString());
            s.put("generation", g.generationId());
            s.put("leader", g.leaderOrNull());
            s.put("protocol", g.protocolName().orElse(null));
            s.put("protocol_type", g.protocolType().orElse(null));
            ArrayNode members = s.putArray("members");
            ObjectNode statics = s.putObject("static");
            TreeSet<String> ids = new TreeSet<>();
            for (ClassicGroupMember m : g.allMembers()) {
                ids.add(m.memberId());
                m.groupInstanceId().ifPresent(i -> statics.put(i, m.memberId()));
            }
            ids.forEach(members::add);
            ArrayNode pending = s.putArray("pending");
            for (String id : oracle.handedOut.keySet()) if (g.isPendingMember(id) && !g.hasMember(id)) pending.add(id);
            return s;
        }
        if (group instanceof ConsumerGroup g) {
            s.put("type", "consumer");
            s.put("state", g.stateAsString());
            s.put("group_epoch", g.groupEpoch());
            s.put("assignment_epoch", g.assignmentEpoch());
            ObjectNode members = s.putObject("members");
            for (Map.Entry<String, ConsumerGroupMember> e : new TreeMap<>(g.members()).entrySet()) {
                ConsumerGroupMember m = e.getValue();
                ObjectNode o = members.putObject(e.getKey());
                o.put("state", m.state().toString());
                o.put("epoch", m.memberEpoch());
                o.put("previous_epoch", m.previousMemberEpoch());
                o.put("instance_id", m.instanceId());
                o.set("assigned", pairs(shard, m.assignedPartitions().entrySet().stream()
                        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, x -> x.getValue().keySet()))));
                o.set("revoking", pairs(shard, m.partitionsPendingRevocation().entrySet().stream()
                        .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, x -> x.getValue().keySet()))));
                Assignment target = g.targetAssignment(e.getKey());
                o.set("target", pairs(shard, target == null ? Map.of() : target.partitions()));
            }
            return s;
        }
        s.put("type", String.valueOf(group.type()));
        s.put("state", group.stateAsString());
        return s;
    }

    private static ArrayNode pairs(Shard shard, Map<Uuid, ? extends Collection<Integer>> parts) {
        TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
        parts.forEach((id, ps) -> sorted.computeIfAbsent(shard.topicName(id), k -> new TreeSet<>()).addAll(ps));
        ArrayNode out = Oracle.JSON.createArrayNode();
        sorted.forEach((t, ps) -> ps.forEach(p -> {
            ArrayNode row = out.addArray();
            row.add(t);
            row.add(p);
        }));
        return out;
    }
}
