// Test driver for docs/snippets/TraceListener.java: one consumer per NAME (threads of one JVM, each its
// own KafkaConsumer and trace file TRACE_DIR/NAME.jsonl) subscribes to topic t with the snippet's
// listener, polls and commits until STOP_FILE exists, then closes.
// Arguments: BOOTSTRAP TRACE_DIR STOP_FILE NAME...
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class TracedConsumers {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Path dir = Path.of(args[1]);
        Path stop = Path.of(args[2]);
        List<Thread> threads = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            String name = args[i];
            Thread t = new Thread(() -> run(bootstrap, dir.resolve(name + ".jsonl"), name, stop));
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
    }

    static void run(String bootstrap, Path file, String name, Path stop) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", "g");
        p.put("client.id", name);
        p.put("auto.offset.reset", "earliest");
        p.put("session.timeout.ms", "10000");
        p.put("heartbeat.interval.ms", "300");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        TraceListener trace = new TraceListener(consumer, file, name, "g", "eager");
        consumer.subscribe(List.of("t"), trace);
        try {
            while (!Files.exists(stop)) {
                if (!consumer.poll(Duration.ofMillis(100)).isEmpty()) consumer.commitSync();
            }
        } finally {
            consumer.close();
            trace.close();
        }
    }
}
