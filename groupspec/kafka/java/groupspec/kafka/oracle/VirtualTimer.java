package groupspec.kafka.oracle;

import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorTimer;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's timer on the virtual clock. As Kafka's runtime timer does: one task per key (scheduling a key
 * again replaces its task), a task that fires runs its operation as a write; a cancelled or replaced task never runs.
 * Tasks due at the same instant fire in the order they were scheduled (Kafka's timing wheel gives no order).
 */
final class VirtualTimer implements CoordinatorTimer<CoordinatorRecord> {
    static final class Task {
        final String key;
        final long deadline;
        final long seq;
        final boolean retry;
        final long retryBackoff;
        final TimeoutOperation<CoordinatorRecord> operation;

        Task(String key, long deadline, long seq, boolean retry, long retryBackoff, TimeoutOperation<CoordinatorRecord> op) {
            this.key = key;
            this.deadline = deadline;
            this.seq = seq;
            this.retry = retry;
            this.retryBackoff = retryBackoff;
            this.operation = op;
        }
    }

    private final VirtualTime time;
    private final Map<String, Task> tasks = new HashMap<>();
    private long seq;

    VirtualTimer(VirtualTime time) {
        this.time = time;
    }

    @Override
    public void schedule(String key, long delay, TimeUnit unit, boolean retry, TimeoutOperation<CoordinatorRecord> op) {
        schedule(key, delay, unit, retry, 500, op);
    }

    @Override
    public void schedule(String key, long delay, TimeUnit unit, boolean retry, long retryBackoff,
                         TimeoutOperation<CoordinatorRecord> op) {
        tasks.put(key, new Task(key, time.now() + unit.toMillis(delay), seq++, retry, retryBackoff, op));
    }

    @Override
    public void scheduleIfAbsent(String key, long delay, TimeUnit unit, boolean retry,
                                 TimeoutOperation<CoordinatorRecord> op) {
        if (!tasks.containsKey(key)) schedule(key, delay, unit, retry, 500, op);
    }

    @Override
    public void cancel(String key) {
        tasks.remove(key);
    }

    @Override
    public boolean isScheduled(String key) {
        return tasks.containsKey(key);
    }

    /** The earliest task due at or before {@code limit} (removed), or null. */
    Task pollDue(long limit) {
        Task best = null;
        for (Task t : tasks.values()) {
            if (t.deadline <= limit && (best == null || t.deadline < best.deadline
                    || (t.deadline == best.deadline && t.seq < best.seq))) {
                best = t;
            }
        }
        if (best != null) tasks.remove(best.key);
        return best;
    }

    void clear() {
        tasks.clear();
    }

    int size() {
        return tasks.size();
    }
}
