package groupspec.kafka.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One Apache Kafka Java consumer ({@code KafkaConsumer}) in its own process, recording what it observes as trace lines
 * (the project's trace format), driven by the real-stack harness like its Python workers.
 *
 * <p>Run as {@code java groupspec.kafka.consumer.Worker SPEC_JSON}. The spec names the bootstrap address, the group,
 * the topics, the member, the protocol ({@code eager}: classic with the range assignor; {@code cooperative}: classic
 * with cooperative-sticky; {@code consumer}: {@code group.protocol=consumer}, KIP-848, with the broker's assignor, or
 * {@code assignor}'s), a static {@code instance_id}, the timeouts, the clock origin ({@code origin_ms}) and the file to
 * append lines to. Each line is flushed at once, so a SIGKILL loses nothing already observed.
 *
 * <p>Recorded: {@code joined} at subscribe; every {@link ConsumerRebalanceListener} call ({@code assigned},
 * {@code revoked}, {@code lost}) with the member id and the generation (under {@code group.protocol=consumer}, the
 * member epoch) from {@code groupMetadata()}; a {@code snapshot} of {@code assignment()} after a poll when it changed;
 * a {@code commit} of the owned partitions' positions every {@code commit_interval_ms} (with whether the coordinator
 * accepted it); {@code fenced} for the errors that reject a member (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
 * FENCED_INSTANCE_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID), {@code error} for any other; {@code left} after a
 * clean close. Standard input carries the harness's commands, one a line: {@code leave}, {@code pause SECONDS},
 * {@code subscribe T1,T2}; the end of input is {@code leave}. A spec without topics starts the worker idle (the JVM
 * up, no subscription): it joins, and records {@code joined}, at its first {@code subscribe}. With
 * {@code revoke_delay_ms} the revocation callback takes that long (as one that flushes does), then commits the revoked
 * partitions' positions (recorded as a {@code commit}) and records {@code revoked} when it returns: the member owns
 * the partitions until then.
 */
public final class Worker {
    private static final List<String> FENCING = Arrays.asList("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
            "FENCED_INSTANCE_ID", "FENCED_MEMBER_EPOCH", "UNRELEASED_INSTANCE_ID");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final double origin;
    private final String member;
    private final String group;
    private final String protocol;
    private final Writer out;
    private KafkaConsumer<byte[], byte[]> consumer;
    private String memberId;
    private Integer generation;
    private List<List<Object>> lastSnapshot;
    private String lastError;
    private long lastErrorAt;
    private final long revokeDelayMs;

    private Worker(JsonNode spec) throws IOException {
        origin = spec.get("origin_ms").asDouble();
        member = spec.get("member").asText();
        group = spec.get("group").asText();
        protocol = spec.path("protocol").asText("eager");
        revokeDelayMs = spec.path("revoke_delay_ms").asLong(0);
        out = new OutputStreamWriter(new FileOutputStream(spec.get("out").asText(), true), StandardCharsets.UTF_8);
    }

    private long now() {
        return (long) Math.floor(System.currentTimeMillis() - origin);
    }

    synchronized void write(String event, Map<String, Object> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("ts_ms", now());
        line.put("group", group);
        line.put("member", member);
        line.put("event", event);
        line.putAll(fields);
        line.putIfAbsent("protocol", protocol.equals("consumer") || protocol.equals("cooperative") ? protocol : "eager");
        if (generation != null) line.putIfAbsent("generation", generation);
        if (memberId != null && !memberId.isEmpty()) line.putIfAbsent("member_id", memberId);
        try {
            out.write(JSON.writeValueAsString(line));
            out.write("\n");
            out.flush();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    void write(String event) {
        write(event, Map.of());
    }

    private static List<List<Object>> parts(Collection<TopicPartition> tps) {
        List<List<Object>> l = new ArrayList<>();
        for (TopicPartition tp : tps) l.add(Arrays.asList(tp.topic(), tp.partition()));
        l.sort((a, b) -> {
            int c = ((String) a.get(0)).compareTo((String) b.get(0));
            return c != 0 ? c : Integer.compare((Integer) a.get(1), (Integer) b.get(1));
        });
        return l;
    }

    private void metadata() {
        try {
            var md = consumer.groupMetadata();
            if (md.memberId() != null && !md.memberId().isEmpty()) memberId = md.memberId();
            if (md.generationId() >= 0) generation = md.generationId();
        } catch (RuntimeException e) {
            // not in a group yet
        }
    }

    private final ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (revokeDelayMs > 0 && !partitions.isEmpty()) {
                // a callback that takes time and then commits what it processed (the common commit-on-revoke): the
                // member owns the partitions until it returns
                try {
                    Thread.sleep(revokeDelayMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                metadata();
                commit(new java.util.HashSet<>(partitions));
            }
            metadata();
            write("revoked", Map.of("partitions", parts(partitions)));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            metadata();
            write("assigned", Map.of("partitions", parts(partitions)));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            write("lost", Map.of("partitions", parts(partitions)));
            if (protocol.equals("consumer")) generation = 0;  // it rejoins with epoch 0
        }
    };

    /** The error's name as Kafka's protocol spells it (e.g. FENCED_INSTANCE_ID), else the exception's class. */
    static String errorName(Throwable e) {
        if (e instanceof CommitFailedException) return "COMMIT_FAILED";
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ApiException) {
                Errors err = Errors.forException(t);
                if (err != Errors.UNKNOWN_SERVER_ERROR) return err.name();
            }
        }
        return e.getClass().getSimpleName();
    }

    private void recordError(Throwable e) {
        String name = errorName(e);
        long t = System.currentTimeMillis();
        if (name.equals(lastError) && t - lastErrorAt < 1000) return;  // a fatal error repeats at every poll
        lastError = name;
        lastErrorAt = t;
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("error", name);
        String msg = String.valueOf(e.getMessage());
        if (!FENCING.contains(name)) f.put("detail", msg.length() > 200 ? msg.substring(0, 200) : msg);
        write(FENCING.contains(name) ? "fenced" : "error", f);
    }

    private Properties config(JsonNode spec) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, spec.get("bootstrap").asText());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, member);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, spec.get("max_poll_interval_ms").asText());
        if (protocol.equals("consumer")) {
            // KIP-848: the session timeout and heartbeat interval are the broker's (the client refuses them)
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            if (spec.hasNonNull("assignor")) p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, spec.get("assignor").asText());
        } else {
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, spec.get("session_timeout_ms").asText());
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, spec.get("heartbeat_interval_ms").asText());
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, protocol.equals("cooperative")
                    ? CooperativeStickyAssignor.class.getName() : RangeAssignor.class.getName());
        }
        if (spec.hasNonNull("instance_id")) p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, spec.get("instance_id").asText());
        return p;
    }

    private void commitOwned() {
        commit(consumer.assignment());
    }

    private void commit(Set<TopicPartition> owned) {
        if (owned.isEmpty()) return;
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : owned) offsets.put(tp, new OffsetAndMetadata(consumer.position(tp, Duration.ofSeconds(5))));
        List<List<Object>> listed = new ArrayList<>();
        for (List<Object> tp : parts(offsets.keySet())) {
            List<Object> row = new ArrayList<>(tp);
            row.add(offsets.get(new TopicPartition((String) tp.get(0), (Integer) tp.get(1))).offset());
            listed.add(row);
        }
        try {
            consumer.commitSync(offsets, Duration.ofSeconds(5));
            metadata();
            write("commit", Map.of("partitions", listed, "accepted", true));
        } catch (KafkaException e) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("partitions", listed);
            f.put("accepted", false);
            f.put("error", errorName(e));
            write("commit", f);
        }
    }

    private void run(JsonNode spec, LinkedBlockingQueue<String> commands) throws InterruptedException {
        consumer = new KafkaConsumer<>(config(spec));
        List<String> topics = new ArrayList<>();
        spec.get("topics").forEach(t -> topics.add(t.asText()));
        Map<String, Object> joined = spec.hasNonNull("instance_id") ? Map.of("instance_id", spec.get("instance_id").asText()) : Map.of();
        boolean subscribed = !topics.isEmpty();  // no topics: started idle (a warm JVM), joins at its first subscribe
        if (subscribed) {
            consumer.subscribe(topics, listener);
            write("joined", joined);
        }
        long commitEvery = spec.path("commit_interval_ms").asLong(1000);
        long nextCommit = System.currentTimeMillis() + commitEvery;
        while (true) {
            String cmd = commands.poll();
            if (cmd != null) {
                if (cmd.equals("leave") || cmd.equals("eof")) {
                    try {
                        consumer.close(Duration.ofSeconds(10));
                    } catch (KafkaException e) {
                        recordError(e);
                    }
                    write("left");
                    return;
                } else if (cmd.startsWith("pause ")) {
                    Thread.sleep((long) (Double.parseDouble(cmd.substring(6).trim()) * 1000));
                } else if (cmd.startsWith("subscribe ")) {
                    consumer.subscribe(Arrays.asList(cmd.substring(10).trim().split(",")), listener);
                    if (!subscribed) {
                        subscribed = true;
                        write("joined", joined);
                    }
                }
            }
            if (!subscribed) {
                Thread.sleep(20);
                continue;
            }
            try {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                records.count();
                List<List<Object>> snap = parts(consumer.assignment());
                if (!snap.equals(lastSnapshot)) {
                    lastSnapshot = snap;
                    metadata();
                    write("snapshot", Map.of("partitions", snap));
                }
                if (commitEvery > 0 && System.currentTimeMillis() >= nextCommit) {
                    nextCommit = System.currentTimeMillis() + commitEvery;
                    commitOwned();
                }
            } catch (KafkaException e) {
                recordError(e);
                Thread.sleep(100);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String level = System.getenv().getOrDefault("GROUPSPEC_WORKER_LOG", "WARN");
        org.apache.logging.log4j.core.config.Configurator.setRootLevel(
                org.apache.logging.log4j.Level.toLevel(level.equals("WARNING") ? "WARN" : level,
                        org.apache.logging.log4j.Level.WARN));
        JsonNode spec = JSON.readTree(args[0]);
        Worker w = new Worker(spec);
        LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) commands.add(line.strip());
            } catch (IOException e) {
                // the harness is gone: leave
            }
            commands.add("eof");
        }, "commands");
        reader.setDaemon(true);
        reader.start();
        try {
            w.run(spec, commands);
        } catch (Exception e) {
            String msg = e.getClass().getSimpleName() + ": " + e.getMessage();
            w.write("error", Map.of("error", msg.length() > 300 ? msg.substring(0, 300) : msg));
            System.exit(3);
        }
        System.exit(0);
    }
}
