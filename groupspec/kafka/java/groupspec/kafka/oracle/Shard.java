package groupspec.kafka.oracle;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorResult;
import org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorShard;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * One __consumer_offsets partition's group coordinator (Kafka's {@code GroupCoordinatorShard}: the
 * {@code GroupMetadataManager} and the {@code OffsetMetadataManager}) run the way Kafka's coordinator runtime runs
 * it, on a virtual clock: a write operation's records are replayed into the shard and appended to an in-memory log
 * that commits at once; a failed append reverts the shard to the snapshot taken before the operation and fails the
 * operation's append future (so the manager answers as it does when the log refuses a write). Timers fire on the
 * virtual clock; executor tasks (the offloaded assignor) run to completion right after the operation that
 * scheduled them. Unloading and loading rebuild the shard from the committed log, as a new coordinator would.
 */
final class Shard {
    private static final boolean DEBUG = System.getenv("GROUPSPEC_ORACLE_DEBUG") != null;
    final VirtualTime time = new VirtualTime();
    final Map<String, Object> props;
    final Map<String, Integer> topics;
    final Map<String, Uuid> topicIds = new TreeMap<>();
    final GroupCoordinatorConfig config;

    private final List<CoordinatorRecord> log = new ArrayList<>();   // committed records, in order
    private final Deque<Runnable> executorQueue = new ArrayDeque<>();
    private VirtualTimer timer;
    private SnapshotRegistry snapshots;
    GroupCoordinatorShard shard;          // null while unloaded
    boolean loading;                      // partition loading (shard not built yet): COORDINATOR_LOAD_IN_PROGRESS
    private Errors failNextAppend;        // store_fails
    private long lastOffset;
    private final GroupCoordinatorMetrics metrics = new GroupCoordinatorMetrics();
    private final KRaftCoordinatorMetadataImage image;

    Shard(Map<String, Object> props, Map<String, Integer> topics) {
        this.props = props;
        this.topics = topics;
        this.config = GroupCoordinatorConfig.fromProps(props);
        MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
        for (Map.Entry<String, Integer> t : topics.entrySet()) {
            Uuid id = topicId(t.getKey());
            topicIds.put(t.getKey(), id);
            delta.replay(new TopicRecord().setName(t.getKey()).setTopicId(id));
            for (int p = 0; p < t.getValue(); p++) {
                delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(List.of(1))
                        .setIsr(List.of(1)).setLeader(1).setLeaderEpoch(0).setPartitionEpoch(0));
            }
        }
        this.image = new KRaftCoordinatorMetadataImage(delta.apply(MetadataProvenance.EMPTY));
        load();
    }

    static Uuid topicId(String name) {
        // a name-based (type 3) UUID: stable, distinct per name, never one of Kafka's reserved ids (0 and 1); the
        // earlier hash with its low bit forced to 1 gave "t0" and "t1" the same id
        java.util.UUID u = java.util.UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
        return new Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    String topicName(Uuid id) {
        for (Map.Entry<String, Uuid> e : topicIds.entrySet()) if (e.getValue().equals(id)) return e.getKey();
        return id.toString();
    }

    private GroupCoordinatorShard build() {
        ShareGroupConfig share = ShareGroupConfig.fromProps(Map.of());
        GroupConfigManager groupConfigs = new GroupConfigManager(Map.of(), config, share);
        LogContext logContext = new LogContext("[oracle] ");
        snapshots = new SnapshotRegistry(logContext);
        timer = new VirtualTimer(time);
        return (GroupCoordinatorShard) new GroupCoordinatorShard.Builder(config, groupConfigs)
                .withAuthorizerPlugin(Optional.empty())
                .withLogContext(logContext)
                .withSnapshotRegistry(snapshots)
                .withTime(time)
                .withTimer(timer)
                .withExecutor(new Executor())
                .withCoordinatorMetrics(metrics)
                .withTopicPartition(new TopicPartition("__consumer_offsets", 0))
                .build();
    }

    /** A new coordinator loads the partition: the committed log replayed into a fresh shard. */
    void load() {
        GroupCoordinatorShard s = build();
        long offset = 0;
        for (CoordinatorRecord r : log) s.replay(offset++, -1L, (short) -1, r);
        lastOffset = offset;
        snapshots.idempotentCreateSnapshot(lastOffset);
        s.onLoaded(image);
        shard = s;
        loading = false;
    }

    /** The coordinator loses the partition (parked requests are answered NOT_COORDINATOR by the shard). */
    void unload() {
        if (shard != null) {
            shard.onUnloaded();
            timer.clear();
            executorQueue.clear();
        }
        shard = null;
        loading = false;
    }

    void failNextAppend(Errors error) {
        failNextAppend = error;
    }

    boolean storeArmed() {
        return failNextAppend != null;
    }

    int timers() {
        return timer == null ? 0 : timer.size();
    }

    /**
     * Runs a write operation as the runtime does; returns its response (null for operations answering through
     * futures). Throws what the operation (or the inactive runtime) throws; the caller maps it to an error.
     */
    <T> T write(Function<GroupCoordinatorShard, CoordinatorResult<T, CoordinatorRecord>> op) {
        if (loading) throw new CoordinatorLoadInProgressException("the partition is loading");
        if (shard == null) throw new NotCoordinatorException("the coordinator does not own the partition");
        long before = lastOffset;
        snapshots.idempotentCreateSnapshot(before);
        CoordinatorResult<T, CoordinatorRecord> result;
        try {
            result = op.apply(shard);
        } catch (RuntimeException e) {
            snapshots.revertToSnapshot(before);
            throw e;
        }
        List<CoordinatorRecord> records = result.records();
        if (!records.isEmpty() && failNextAppend != null) {
            Errors error = failNextAppend;
            failNextAppend = null;
            snapshots.revertToSnapshot(before);
            lastOffset = before;
            RuntimeException e = error.exception();
            if (result.appendFuture() != null) result.appendFuture().completeExceptionally(e);
            throw e;
        }
        long offset = before;
        if (DEBUG) records.forEach(r -> System.err.println("oracle: record at " + time.now() + ": " + r));
        for (CoordinatorRecord r : records) {
            if (result.replayRecords()) shard.replay(offset, -1L, (short) -1, r);
            offset++;
        }
        log.addAll(records);
        lastOffset = offset;
        snapshots.idempotentCreateSnapshot(lastOffset);
        snapshots.deleteSnapshotsUpTo(lastOffset);
        if (result.appendFuture() != null) result.appendFuture().complete(null);
        runExecutorTasks();
        return result.response();
    }

    private void runExecutorTasks() {
        while (!executorQueue.isEmpty()) executorQueue.poll().run();
    }

    /** Lets time pass to {@code at}: every timer due on the way fires at its deadline, in deadline order. */
    void advance(long at) {
        while (true) {
            VirtualTimer.Task t = timer == null || shard == null ? null : timer.pollDue(at);
            if (t == null) break;
            time.set(Math.max(time.now(), t.deadline));
            try {
                write(s -> t.operation.generateRecords());
            } catch (NotCoordinatorException | CoordinatorLoadInProgressException e) {
                // ignored, as the runtime does while the coordinator is not active
            } catch (RuntimeException e) {
                if (t.retry) timer.schedule(t.key, t.retryBackoff, java.util.concurrent.TimeUnit.MILLISECONDS, true,
                        t.retryBackoff, t.operation);
            }
        }
        time.set(Math.max(time.now(), at));
    }

    /** The background executor: a task runs when the operation that scheduled it has been written. */
    private final class Executor implements CoordinatorExecutor<CoordinatorRecord> {
        private final Map<String, Boolean> scheduled = new LinkedHashMap<>();

        @Override
        public <R> boolean schedule(String key, TaskRunnable<R> task, TaskOperation<CoordinatorRecord, R> operation) {
            if (scheduled.containsKey(key)) return false;
            scheduled.put(key, true);
            executorQueue.add(() -> {
                if (scheduled.remove(key) == null) return;
                R value = null;
                Throwable error = null;
                try {
                    value = task.run();
                } catch (Throwable t) {
                    error = t;
                }
                final R v = value;
                final Throwable err = error;
                try {
                    write(s -> operation.onComplete(v, err));
                } catch (RuntimeException ignored) {
                    // the runtime logs a failed executor write and moves on
                }
            });
            return true;
        }

        @Override
        public boolean isScheduled(String key) {
            return scheduled.containsKey(key);
        }

        @Override
        public void cancel(String key) {
            scheduled.remove(key);
        }
    }

    static CompletableFuture<Void> done() {
        return CompletableFuture.completedFuture(null);
    }
}
