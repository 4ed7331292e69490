// A Kafka ConsumerRebalanceListener that writes the groupspec trace format (JSON Lines).
// Paste it into your project (no dependency beyond kafka-clients). One file per consumer process;
// `groupspec trace check` reads each file as one trace, so put the files of one group together
// first (`cat traces/*.jsonl > group.jsonl`): lines are ordered by ts_ms (wall-clock milliseconds).
//
//   TraceListener trace = new TraceListener(consumer, Path.of("traces/" + name + ".jsonl"), name, "g", "eager");
//   consumer.subscribe(List.of("t"), trace);
//   try { while (running) { consumer.poll(Duration.ofMillis(100)); ... } }
//   finally { consumer.close(); trace.close(); }   // close() writes "left"
//
// protocol: "eager" (range, roundrobin, sticky: onPartitionsAssigned gets the whole assignment),
// "cooperative" (cooperative-sticky: only what was added) or "consumer" (group.protocol=consumer, KIP-848).
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class TraceListener implements ConsumerRebalanceListener, AutoCloseable {
    private final Consumer<?, ?> consumer;
    private final BufferedWriter out;
    private final String member, group, protocol;
    private final Set<String> announced = new HashSet<>();

    public TraceListener(Consumer<?, ?> consumer, Path path, String member, String group, String protocol) {
        this.consumer = consumer;
        this.member = member;
        this.group = group;
        this.protocol = protocol;
        try {
            this.out = Files.newBufferedWriter(path, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                                               StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        write("joined", "");
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        for (String topic : new TreeSet<>(partitions.stream().map(TopicPartition::topic).collect(Collectors.toSet()))) {
            if (announced.add(topic)) {  // partition counts, for completeness and balance
                java.util.List<PartitionInfo> infos = consumer.partitionsFor(topic);
                if (infos != null) write("topic", ",\"topic\":" + quote(topic) + ",\"partitions\":" + infos.size());
            }
        }
        partitions("assigned", partitions);
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        partitions("revoked", partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        partitions("lost", partitions);
    }

    @Override
    public void close() {
        write("left", "");
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void partitions(String event, Collection<TopicPartition> partitions) {
        String list = partitions.stream()
            .sorted((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition())
                                                          : a.topic().compareTo(b.topic()))
            .map(tp -> "[" + quote(tp.topic()) + "," + tp.partition() + "]")
            .collect(Collectors.joining(",", "[", "]"));
        String generation = "";
        try {  // the generation (with group.protocol=consumer, the member epoch) the member is in
            int g = consumer.groupMetadata().generationId();
            if (g >= 0) generation = ",\"generation\":" + g;
        } catch (RuntimeException e) {
            // no group metadata (not subscribed yet): leave the field out
        }
        write(event, ",\"partitions\":" + list + ",\"protocol\":" + quote(protocol) + generation);
    }

    private synchronized void write(String event, String fields) {
        try {
            out.write("{\"ts_ms\":" + System.currentTimeMillis() + ",\"group\":" + quote(group) + ",\"member\":"
                      + quote(member) + ",\"event\":" + quote(event) + fields + "}\n");
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
