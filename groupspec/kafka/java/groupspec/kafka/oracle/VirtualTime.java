package groupspec.kafka.oracle;

import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/** A clock that only moves when the oracle moves it: Kafka's group coordinator reads time only through this. */
final class VirtualTime implements Time {
    private long nowMs;

    long now() {
        return nowMs;
    }

    void set(long ms) {
        if (ms < nowMs) throw new IllegalArgumentException("time goes backwards: " + ms + " < " + nowMs);
        nowMs = ms;
    }

    @Override
    public long milliseconds() {
        return nowMs;
    }

    @Override
    public long nanoseconds() {
        return nowMs * 1_000_000L;
    }

    @Override
    public void sleep(long ms) {
        nowMs += ms;
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) throw new IllegalStateException("the oracle never waits on an object");
    }
}
