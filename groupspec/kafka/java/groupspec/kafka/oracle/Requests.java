package groupspec.kafka.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The requests, as Kafka's {@code GroupCoordinatorService} hands them to a shard: its checks before the shard
 * (empty group id, session timeout range, the ConsumerGroupHeartbeat field rules), then the shard's write, then the
 * service's error mapping. Every answer goes to the oracle's outbox, stamped with the virtual time it was completed.
 */
final class Requests {
    private static final HexFormat HEX = HexFormat.of();
    private final Oracle oracle;

    Requests(Oracle oracle) {
        this.oracle = oracle;
    }

    void handle(String kind, JsonNode op) {
        switch (kind) {
            case "JoinGroup" -> join(op);
            case "SyncGroup" -> sync(op);
            case "Heartbeat" -> heartbeat(op);
            case "LeaveGroup" -> leave(op);
            case "OffsetCommit" -> commit(op);
            case "OffsetFetch" -> fetch(op);
            case "ConsumerGroupHeartbeat" -> consumerHeartbeat(op);
            default -> throw new IllegalArgumentException("unknown op " + kind);
        }
    }

    private ObjectNode answer(JsonNode op, String request, Errors error) {
        ObjectNode a = Oracle.JSON.createObjectNode();
        a.put("conn", op.path("conn").asText());
        a.put("request", request);
        a.put("at", oracle.now());
        a.put("error", error.name());
        return a;
    }

    private static String str(JsonNode op, String field, String dflt) {
        JsonNode v = op.get(field);
        return v == null || v.isNull() ? dflt : v.asText();
    }

    private static Context context(JsonNode op, ApiKeys api, int dfltVersion) {
        return new Context(api.id, op.path("version").asInt(dfltVersion), str(op, "client_id", "consumer"));
    }

    // ------------------------------------------------------------------------------------------- JoinGroup
    private void join(JsonNode op) {
        JoinGroupRequestData req = new JoinGroupRequestData()
                .setGroupId(str(op, "group_id", "g"))
                .setMemberId(str(op, "member_id", ""))
                .setGroupInstanceId(str(op, "instance_id", null))
                .setProtocolType(str(op, "protocol_type", "consumer"))
                .setSessionTimeoutMs(op.path("session_timeout_ms").asInt(10000))
                .setRebalanceTimeoutMs(op.path("rebalance_timeout_ms").asInt(60000));
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols =
                new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        for (JsonNode p : op.path("protocols")) {
            protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol()
                    .setName(p.get(0).asText()).setMetadata(HEX.parseHex(p.get(1).asText())));
        }
        req.setProtocols(protocols);
        Context ctx = context(op, ApiKeys.JOIN_GROUP, 9);
        CompletableFuture<JoinGroupResponseData> future = new CompletableFuture<>();
        future.whenComplete((r, e) -> oracle.outbox.add(joinAnswer(op, r)));
        if (Utils.isBlank(req.groupId())) {
            future.complete(new JoinGroupResponseData().setMemberId(req.memberId()).setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        if (req.sessionTimeoutMs() < oracle.shard().config.classicGroupMinSessionTimeoutMs()
                || req.sessionTimeoutMs() > oracle.shard().config.classicGroupMaxSessionTimeoutMs()) {
            future.complete(new JoinGroupResponseData().setMemberId(req.memberId())
                    .setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code()));
            return;
        }
        try {
            oracle.shard().write(s -> s.classicGroupJoin(ctx, req, future));
        } catch (RuntimeException e) {
            if (!future.isDone()) future.complete(new JoinGroupResponseData().setErrorCode(Oracle.errorOf(e).code()));
        }
    }

    private ObjectNode joinAnswer(JsonNode op, JoinGroupResponseData r) {
        ObjectNode a = answer(op, "JoinGroup", Errors.forCode(r.errorCode()));
        if (r.memberId() != null && !r.memberId().isEmpty()) oracle.handedOut.putIfAbsent(r.memberId(), op.path("conn").asText());
        a.put("member_id", r.memberId());
        a.put("generation", r.generationId());
        a.put("leader", r.leader());
        a.put("protocol", r.protocolName());
        a.put("protocol_type", r.protocolType());
        ArrayNode members = a.putArray("members");
        for (JoinGroupResponseData.JoinGroupResponseMember m : r.members()) members.add(m.memberId());
        a.put("skip_assignment", r.skipAssignment());
        return a;
    }

    // ------------------------------------------------------------------------------------------- SyncGroup
    private void sync(JsonNode op) {
        SyncGroupRequestData req = new SyncGroupRequestData()
                .setGroupId(str(op, "group_id", "g"))
                .setMemberId(str(op, "member_id", ""))
                .setGroupInstanceId(str(op, "instance_id", null))
                .setGenerationId(op.path("generation").asInt(-1))
                .setProtocolType(str(op, "protocol_type", null))
                .setProtocolName(str(op, "protocol_name", null));
        List<SyncGroupRequestData.SyncGroupRequestAssignment> assignments = new ArrayList<>();
        for (JsonNode p : op.path("assignments")) {
            assignments.add(new SyncGroupRequestData.SyncGroupRequestAssignment()
                    .setMemberId(p.get(0).asText()).setAssignment(HEX.parseHex(p.get(1).asText())));
        }
        req.setAssignments(assignments);
        Context ctx = context(op, ApiKeys.SYNC_GROUP, 5);
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        future.whenComplete((r, e) -> {
            ObjectNode a = answer(op, "SyncGroup", Errors.forCode(r.errorCode()));
            a.put("assignment", r.assignment() == null ? "" : HEX.formatHex(r.assignment()));
            a.put("protocol", r.protocolName());
            a.put("protocol_type", r.protocolType());
            oracle.outbox.add(a);
        });
        if (Utils.isBlank(req.groupId())) {
            future.complete(new SyncGroupResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        try {
            oracle.shard().write(s -> s.classicGroupSync(ctx, req, future));
        } catch (RuntimeException e) {
            if (!future.isDone()) future.complete(new SyncGroupResponseData().setErrorCode(Oracle.errorOf(e).code()));
        }
    }

    // ------------------------------------------------------------------------------------------- Heartbeat
    private void heartbeat(JsonNode op) {
        HeartbeatRequestData req = new HeartbeatRequestData()
                .setGroupId(str(op, "group_id", "g"))
                .setMemberId(str(op, "member_id", ""))
                .setGroupInstanceId(str(op, "instance_id", null))
                .setGenerationId(op.path("generation").asInt(-1));
        Context ctx = context(op, ApiKeys.HEARTBEAT, 4);
        Errors error;
        if (Utils.isBlank(req.groupId())) {
            error = Errors.INVALID_GROUP_ID;
        } else {
            try {
                HeartbeatResponseData r = oracle.shard().write(s -> s.classicGroupHeartbeat(ctx, req));
                error = Errors.forCode(r.errorCode());
            } catch (RuntimeException e) {
                error = Oracle.errorOf(e);
                if (error == Errors.COORDINATOR_LOAD_IN_PROGRESS) error = Errors.NONE;
            }
        }
        oracle.outbox.add(answer(op, "Heartbeat", error));
    }

    // ------------------------------------------------------------------------------------------ LeaveGroup
    private void leave(JsonNode op) {
        LeaveGroupRequestData req = new LeaveGroupRequestData().setGroupId(str(op, "group_id", "g"));
        List<LeaveGroupRequestData.MemberIdentity> members = new ArrayList<>();
        for (JsonNode m : op.path("members")) {
            members.add(new LeaveGroupRequestData.MemberIdentity()
                    .setMemberId(m.get(0).asText()).setGroupInstanceId(m.get(1).isNull() ? null : m.get(1).asText()));
        }
        req.setMembers(members);
        Context ctx = context(op, ApiKeys.LEAVE_GROUP, 5);
        LeaveGroupResponseData r;
        if (Utils.isBlank(req.groupId())) {
            r = new LeaveGroupResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code());
        } else {
            try {
                r = oracle.shard().write(s -> s.classicGroupLeave(ctx, req));
            } catch (RuntimeException e) {
                Errors error = Oracle.errorOf(e);
                if (error == Errors.UNKNOWN_MEMBER_ID) {
                    List<LeaveGroupResponseData.MemberResponse> out = new ArrayList<>();
                    for (LeaveGroupRequestData.MemberIdentity m : members) {
                        out.add(new LeaveGroupResponseData.MemberResponse().setMemberId(m.memberId())
                                .setGroupInstanceId(m.groupInstanceId()).setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
                    }
                    r = new LeaveGroupResponseData().setMembers(out);
                } else {
                    r = new LeaveGroupResponseData().setErrorCode(error.code());
                }
            }
        }
        ObjectNode a = answer(op, "LeaveGroup", Errors.forCode(r.errorCode()));
        a.put("version", ctx.requestVersion());
        ArrayNode out = a.putArray("members");
        for (LeaveGroupResponseData.MemberResponse m : r.members()) {
            ObjectNode e = out.addObject();
            e.put("member_id", m.memberId());
            e.put("instance_id", m.groupInstanceId());
            e.put("error", Errors.forCode(m.errorCode()).name());
        }
        oracle.outbox.add(a);
    }

    // ---------------------------------------------------------------------------------------- OffsetCommit
    private void commit(JsonNode op) {
        OffsetCommitRequestData req = new OffsetCommitRequestData()
                .setGroupId(str(op, "group_id", "g"))
                .setMemberId(str(op, "member_id", ""))
                .setGroupInstanceId(str(op, "instance_id", null))
                .setGenerationIdOrMemberEpoch(op.path("generation").asInt(-1));
        List<OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new ArrayList<>();
        for (JsonNode o : op.path("offsets")) {
            String name = o.get(0).asText();
            OffsetCommitRequestData.OffsetCommitRequestTopic topic = topics.stream()
                    .filter(t -> t.name().equals(name)).findFirst().orElse(null);
            if (topic == null) {
                topic = new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(name)
                        .setTopicId(oracle.shard().topicIds.getOrDefault(name, Uuid.ZERO_UUID));
                topics.add(topic);
            }
            topic.partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(o.get(1).asInt()).setCommittedOffset(o.get(2).asLong()));
        }
        req.setTopics(topics);
        Context ctx = context(op, ApiKeys.OFFSET_COMMIT, 8);
        TreeSet<String> errors = new TreeSet<>();
        try {
            OffsetCommitResponseData r = oracle.shard().write(s -> s.commitOffset(ctx, req));
            for (OffsetCommitResponseData.OffsetCommitResponseTopic t : r.topics()) {
                for (OffsetCommitResponseData.OffsetCommitResponsePartition p : t.partitions()) {
                    errors.add(Errors.forCode(p.errorCode()).name());
                }
            }
        } catch (RuntimeException e) {
            errors.add(Oracle.errorOf(e).name());
        }
        ObjectNode a = answer(op, "OffsetCommit", Errors.NONE);
        a.put("error", errors.isEmpty() ? "NONE" : String.join("+", errors));
        oracle.outbox.add(a);
    }

    // ----------------------------------------------------------------------------------------- OffsetFetch
    private void fetch(JsonNode op) {
        OffsetFetchRequestData.OffsetFetchRequestGroup req = new OffsetFetchRequestData.OffsetFetchRequestGroup()
                .setGroupId(str(op, "group_id", "g"));
        JsonNode parts = op.get("partitions");
        if (parts == null || parts.isNull()) {
            req.setTopics(null);
        } else {
            List<OffsetFetchRequestData.OffsetFetchRequestTopics> topics = new ArrayList<>();
            for (JsonNode p : parts) {
                String name = p.get(0).asText();
                OffsetFetchRequestData.OffsetFetchRequestTopics topic = topics.stream()
                        .filter(t -> t.name().equals(name)).findFirst().orElse(null);
                if (topic == null) {
                    topic = new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(name);
                    topics.add(topic);
                }
                topic.partitionIndexes().add(p.get(1).asInt());
            }
            req.setTopics(topics);
        }
        Errors error = Errors.NONE;
        ArrayNode offsets = Oracle.JSON.createArrayNode();
        try {
            Shard s = oracle.shard();
            if (s.loading) throw Errors.COORDINATOR_LOAD_IN_PROGRESS.exception();
            if (s.shard == null) throw Errors.NOT_COORDINATOR.exception();
            OffsetFetchResponseData.OffsetFetchResponseGroup r = s.shard.fetchOffsets(req, Long.MAX_VALUE);
            error = Errors.forCode(r.errorCode());
            for (OffsetFetchResponseData.OffsetFetchResponseTopics t : r.topics()) {
                for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                    ArrayNode row = offsets.addArray();
                    row.add(t.name());
                    row.add(p.partitionIndex());
                    row.add(p.committedOffset());
                }
            }
        } catch (RuntimeException e) {
            error = Oracle.errorOf(e);
        }
        ObjectNode a = answer(op, "OffsetFetch", error);
        a.set("offsets", offsets);
        oracle.outbox.add(a);
    }

    // ------------------------------------------------------------------------------ ConsumerGroupHeartbeat
    private void consumerHeartbeat(JsonNode op) {
        ConsumerGroupHeartbeatRequestData req = new ConsumerGroupHeartbeatRequestData()
                .setGroupId(str(op, "group_id", "g"))
                .setMemberId(str(op, "member_id", ""))
                .setMemberEpoch(op.path("member_epoch").asInt())
                .setInstanceId(str(op, "instance_id", null))
                .setRackId(str(op, "rack_id", null))
                .setRebalanceTimeoutMs(op.path("rebalance_timeout_ms").asInt(-1))
                .setServerAssignor(str(op, "server_assignor", null))
                .setSubscribedTopicRegex(str(op, "subscribed_topic_regex", null));
        JsonNode names = op.get("subscribed_topic_names");
        if (names == null || names.isNull()) {
            req.setSubscribedTopicNames(null);
        } else {
            List<String> list = new ArrayList<>();
            names.forEach(n -> list.add(n.asText()));
            req.setSubscribedTopicNames(list);
        }
        JsonNode owned = op.get("owned");
        if (owned == null || owned.isNull()) {
            req.setTopicPartitions(null);
        } else {
            List<ConsumerGroupHeartbeatRequestData.TopicPartitions> tps = new ArrayList<>();
            for (JsonNode p : owned) {
                Uuid id = oracle.shard().topicIds.getOrDefault(p.get(0).asText(), Uuid.ZERO_UUID);
                ConsumerGroupHeartbeatRequestData.TopicPartitions tp = tps.stream()
                        .filter(t -> t.topicId().equals(id)).findFirst().orElse(null);
                if (tp == null) {
                    tp = new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(id);
                    tps.add(tp);
                }
                tp.partitions().add(p.get(1).asInt());
            }
            req.setTopicPartitions(tps);
        }
        Context ctx = context(op, ApiKeys.CONSUMER_GROUP_HEARTBEAT, 1);
        ConsumerGroupHeartbeatResponseData r;
        try {
            validate(req, ctx.requestVersion());
            r = oracle.shard().write(s -> s.consumerGroupHeartbeat(ctx, req));
        } catch (RuntimeException e) {
            r = new ConsumerGroupHeartbeatResponseData().setErrorCode(Oracle.errorOf(e).code());
        }
        ObjectNode a = answer(op, "ConsumerGroupHeartbeat", Errors.forCode(r.errorCode()));
        a.put("member_id", r.memberId());
        a.put("member_epoch", r.memberEpoch());
        a.put("heartbeat_interval_ms", r.heartbeatIntervalMs());
        if (r.assignment() == null) {
            a.putNull("assignment");
        } else {
            ArrayNode parts = a.putArray("assignment");
            for (ConsumerGroupHeartbeatResponseData.TopicPartitions tp : r.assignment().topicPartitions()) {
                String name = oracle.shard().topicName(tp.topicId());
                for (int p : tp.partitions()) {
                    ArrayNode row = parts.addArray();
                    row.add(name);
                    row.add(p);
                }
            }
        }
        oracle.outbox.add(a);
    }

    /** GroupCoordinatorService's checks of a ConsumerGroupHeartbeat before the shard sees it. */
    private void validate(ConsumerGroupHeartbeatRequestData r, int version) {
        if (version >= 1 || r.memberEpoch() > 0 || r.memberEpoch() == -1) blank(r.memberId(), "MemberId can't be empty.");
        blank(r.groupId(), "GroupId can't be empty.");
        blank(r.instanceId(), "InstanceId can't be empty.");
        blank(r.rackId(), "RackId can't be empty.");
        if (r.memberEpoch() == 0) {
            if (r.rebalanceTimeoutMs() == -1) invalid("RebalanceTimeoutMs must be provided in first request.");
            if (r.topicPartitions() == null || !r.topicPartitions().isEmpty()) {
                invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if (r.subscribedTopicNames() == null && r.subscribedTopicRegex() == null) {
                invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
            }
        } else if (r.memberEpoch() == -2) {
            if (r.instanceId() == null) invalid("InstanceId can't be null.");
        } else if (r.memberEpoch() < -2) {
            invalid("MemberEpoch is invalid.");
        }
        if (r.serverAssignor() != null && !oracle.shard().config.consumerGroupAssignors().stream()
                .map(a -> a.name()).toList().contains(r.serverAssignor())) {
            throw Errors.UNSUPPORTED_ASSIGNOR.exception("ServerAssignor " + r.serverAssignor() + " is not supported.");
        }
    }

    private static void blank(String value, String message) {
        if (value != null && value.trim().isEmpty()) invalid(message);
    }

    private static void invalid(String message) {
        throw Errors.INVALID_REQUEST.exception(message);
    }
}
