package groupspec.kafka.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * groupspec's Kafka oracle: Apache Kafka's own group coordinator (the pinned release's
 * {@code GroupCoordinatorShard}) driven by JSON lines on stdin, one answer line per request line on stdout.
 *
 * <p>Input ops: {@code init} (a fresh coordinator: config, topics), {@code advance}, {@code JoinGroup},
 * {@code SyncGroup}, {@code Heartbeat}, {@code LeaveGroup}, {@code OffsetCommit}, {@code OffsetFetch},
 * {@code ConsumerGroupHeartbeat}, {@code unload}, {@code load}, {@code load_start}, {@code load_finish},
 * {@code store_fails}, {@code quit}. Every op but {@code init} carries {@code at} (virtual ms); time advances to it
 * first and timers due on the way fire. The answer: {@code {"responses": [...], "state": {...}}}, responses in the
 * order the coordinator completed them (each with the connection {@code conn} of its request and the time it was
 * completed), the state of {@code group_id} after the op. A bad op is answered {@code {"error": "..."}}.
 * Everything Kafka logs goes to stderr.
 */
public final class Oracle {
    static final ObjectMapper JSON = new ObjectMapper();

    private Shard shard;
    private final Requests requests = new Requests(this);
    final List<ObjectNode> outbox = new ArrayList<>();
    final Map<String, String> handedOut = new TreeMap<>();   // member ids the coordinator gave out -> conn

    public static void main(String[] args) throws Exception {
        OutputStream out = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        Oracle oracle = new Oracle();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String answer;
            try {
                JsonNode op = JSON.readTree(line);
                if ("quit".equals(op.path("op").asText())) break;
                answer = JSON.writeValueAsString(oracle.handle(op));
            } catch (Exception e) {
                ObjectNode err = JSON.createObjectNode();
                err.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                answer = JSON.writeValueAsString(err);
            }
            out.write((answer + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }

    Shard shard() {
        return shard;
    }

    long now() {
        return shard.time.now();
    }

    ObjectNode handle(JsonNode op) {
        String kind = op.path("op").asText();
        if ("init".equals(kind)) {
            init(op.path("config"));
            ObjectNode answer = JSON.createObjectNode();
            answer.put("ok", true);
            return answer;
        }
        if (shard == null) throw new IllegalStateException("send an init op first");
        outbox.clear();
        shard.advance(op.path("at").asLong(now()));
        String group = op.path("state_group").asText(op.path("group_id").asText("g"));
        switch (kind) {
            case "advance" -> { }
            case "unload" -> shard.unload();
            case "load" -> {
                shard.unload();
                shard.load();
            }
            case "load_start" -> {
                shard.unload();
                shard.loading = true;
            }
            case "load_finish" -> {
                if (shard.loading) shard.load();
            }
            case "store_fails" -> shard.failNextAppend(Errors.valueOf(op.path("error").asText()));
            default -> requests.handle(kind, op);
        }
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode responses = answer.putArray("responses");
        outbox.forEach(responses::add);
        outbox.clear();
        answer.set("state", States.describe(this, group));
        return answer;
    }

    private void init(JsonNode cfg) {
        Map<String, Object> props = new HashMap<>();
        putInt(props, cfg, "initial_rebalance_delay_ms", "group.initial.rebalance.delay.ms");
        putInt(props, cfg, "min_session_timeout_ms", "group.min.session.timeout.ms");
        putInt(props, cfg, "max_session_timeout_ms", "group.max.session.timeout.ms");
        putInt(props, cfg, "group_max_size", "group.max.size");
        putInt(props, cfg, "offsets_partitions", "offsets.topic.num.partitions");
        putInt(props, cfg, "consumer_session_timeout_ms", "group.consumer.session.timeout.ms");
        putInt(props, cfg, "consumer_min_session_timeout_ms", "group.consumer.min.session.timeout.ms");
        putInt(props, cfg, "consumer_heartbeat_interval_ms", "group.consumer.heartbeat.interval.ms");
        putInt(props, cfg, "consumer_min_heartbeat_interval_ms", "group.consumer.min.heartbeat.interval.ms");
        putInt(props, cfg, "consumer_assignment_interval_ms", "group.consumer.assignment.interval.ms");
        if (cfg.has("consumer_assignor_offload")) {
            props.put("group.consumer.assignor.offload.enable", String.valueOf(cfg.get("consumer_assignor_offload").asBoolean()));
        }
        if (cfg.has("consumer_assignors")) {
            List<String> names = new ArrayList<>();
            cfg.get("consumer_assignors").forEach(n -> names.add(n.asText()));
            props.put("group.consumer.assignors", String.join(",", names));
        }
        if (cfg.has("extra")) cfg.get("extra").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        Map<String, Integer> topics = new TreeMap<>();
        JsonNode t = cfg.path("topics");
        if (t.isObject()) t.fields().forEachRemaining(e -> topics.put(e.getKey(), e.getValue().asInt()));
        else topics.put("t", 4);
        handedOut.clear();
        outbox.clear();
        shard = new Shard(props, topics);
    }

    private static void putInt(Map<String, Object> props, JsonNode cfg, String field, String key) {
        JsonNode v = cfg.get(field);
        if (v != null && !v.isNull()) props.put(key, String.valueOf(v.asLong()));
    }

    /** The error a failed operation answers with, mapped as Kafka's coordinator service maps it. */
    static Errors errorOf(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        Errors error = ApiError.fromThrowable(e).error();
        return switch (error) {
            case NETWORK_EXCEPTION -> Errors.COORDINATOR_LOAD_IN_PROGRESS;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT -> Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> Errors.UNKNOWN_SERVER_ERROR;
            default -> {
                if (error == Errors.UNKNOWN_SERVER_ERROR && !(e instanceof ApiException)) {
                    System.err.println("oracle: unexpected exception in Kafka's coordinator: " + e);
                    e.printStackTrace(System.err);
                }
                yield error;
            }
        };
    }
}
