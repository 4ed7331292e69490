// One franz-go consumer (github.com/twmb/franz-go, the pure-Go Kafka client) in its own process, recording what it
// observes as trace lines (the project's trace format), driven by the real-stack harness like its other workers.
//
// Run as `franzgo-worker SPEC_JSON`. The spec names the bootstrap address, the group, the topics, the member, the
// protocol (eager: classic with the range balancer; cooperative: classic with cooperative-sticky; static: eager
// with a group.instance.id), the timeouts, the clock origin (origin_ms) and the file to append lines to; each
// line is written at once, so a SIGKILL loses nothing already observed.
//
// Recorded: joined at start; every rebalance callback (assigned, revoked, lost) with the member id and generation
// of GroupMetadata(); a snapshot of the owned partitions after a poll when they changed; a commit of the consumed
// positions every commit_interval_ms (whether the coordinator accepted it); fenced for the errors that reject a
// member, error for any other; left after a clean close. Standard input carries the harness's commands, one a
// line: leave, pause SECONDS, subscribe T1,T2 (franz-go can add topics to a running consumer, not drop them); the
// end of input is leave.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var fencing = map[string]bool{"UNKNOWN_MEMBER_ID": true, "ILLEGAL_GENERATION": true, "FENCED_INSTANCE_ID": true,
	"FENCED_MEMBER_EPOCH": true, "UNRELEASED_INSTANCE_ID": true}

type worker struct {
	mu       sync.Mutex
	origin   float64
	member   string
	group    string
	protocol string
	out      *os.File
	cl       *kgo.Client
	owned    map[string]map[int32]bool
	lastSnap string
	lastErr  string
	lastAt   time.Time
}

func (w *worker) now() int64 {
	return int64(math.Floor(float64(time.Now().UnixNano())/1e6 - w.origin))
}

func (w *worker) write(event string, fields map[string]any) {
	line := map[string]any{"ts_ms": w.now(), "group": w.group, "member": w.member, "event": event}
	for k, v := range fields {
		line[k] = v
	}
	proto := "eager"
	if w.protocol == "cooperative" {
		proto = "cooperative"
	}
	if _, ok := line["protocol"]; !ok {
		line["protocol"] = proto
	}
	if w.cl != nil {
		id, gen := w.cl.GroupMetadata()
		if _, ok := line["generation"]; !ok && gen >= 0 {
			line["generation"] = gen
		}
		if _, ok := line["member_id"]; !ok && id != "" {
			line["member_id"] = id
		}
	}
	b, _ := json.Marshal(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Write(append(b, '\n'))
}

func parts(m map[string][]int32) [][]any {
	var l [][]any
	for t, ps := range m {
		for _, p := range ps {
			l = append(l, []any{t, p})
		}
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i][0].(string) != l[j][0].(string) {
			return l[i][0].(string) < l[j][0].(string)
		}
		return l[i][1].(int32) < l[j][1].(int32)
	})
	if l == nil {
		l = [][]any{}
	}
	return l
}

func (w *worker) ownedMap() map[string][]int32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[string][]int32{}
	for t, ps := range w.owned {
		for p := range ps {
			m[t] = append(m[t], p)
		}
	}
	return m
}

func (w *worker) change(m map[string][]int32, add bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for t, ps := range m {
		for _, p := range ps {
			if add {
				if w.owned[t] == nil {
					w.owned[t] = map[int32]bool{}
				}
				w.owned[t][p] = true
			} else if w.owned[t] != nil {
				delete(w.owned[t], p)
			}
		}
	}
}

// errorName: the error's name as Kafka's protocol spells it, else the Go error's text.
func errorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func (w *worker) recordError(err error) {
	name := errorName(err)
	if name == w.lastErr && time.Since(w.lastAt) < time.Second {
		return
	}
	w.lastErr, w.lastAt = name, time.Now()
	if fencing[name] {
		w.write("fenced", map[string]any{"error": name})
		return
	}
	detail := err.Error()
	if len(detail) > 200 {
		detail = detail[:200]
	}
	w.write("error", map[string]any{"error": name, "detail": detail})
}

func (w *worker) commit(ctx context.Context) {
	offsets := w.cl.UncommittedOffsets()
	if len(offsets) == 0 {
		return
	}
	var listed [][]any
	for t, ps := range offsets {
		for p, eo := range ps {
			listed = append(listed, []any{t, p, eo.Offset})
		}
	}
	sort.Slice(listed, func(i, j int) bool {
		if listed[i][0].(string) != listed[j][0].(string) {
			return listed[i][0].(string) < listed[j][0].(string)
		}
		return listed[i][1].(int32) < listed[j][1].(int32)
	})
	if err := w.cl.CommitUncommittedOffsets(ctx); err != nil {
		w.write("commit", map[string]any{"partitions": listed, "accepted": false, "error": errorName(err)})
		return
	}
	w.write("commit", map[string]any{"partitions": listed, "accepted": true})
}

func str(spec map[string]any, k, def string) string {
	switch v := spec[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return def
}

func ms(spec map[string]any, k string, def float64) time.Duration {
	if v, ok := spec[k].(float64); ok {
		def = v
	}
	return time.Duration(def) * time.Millisecond
}

func main() {
	var spec map[string]any
	if err := json.Unmarshal([]byte(os.Args[1]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "franzgo-worker: bad spec:", err)
		os.Exit(2)
	}
	out, err := os.OpenFile(str(spec, "out", ""), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "franzgo-worker:", err)
		os.Exit(2)
	}
	w := &worker{origin: spec["origin_ms"].(float64), member: str(spec, "member", ""), group: str(spec, "group", "g"),
		protocol: str(spec, "protocol", "eager"), out: out, owned: map[string]map[int32]bool{}}
	var topics []string
	if ts, ok := spec["topics"].([]any); ok {
		for _, t := range ts {
			topics = append(topics, t.(string))
		}
	}
	balancer := kgo.RangeBalancer()
	if w.protocol == "cooperative" {
		balancer = kgo.CooperativeStickyBalancer()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(str(spec, "bootstrap", "")),
		kgo.ConsumerGroup(w.group),
		kgo.ClientID(w.member),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Balancers(balancer),
		kgo.SessionTimeout(ms(spec, "session_timeout_ms", 10000)),
		kgo.HeartbeatInterval(ms(spec, "heartbeat_interval_ms", 3000)),
		kgo.RebalanceTimeout(ms(spec, "max_poll_interval_ms", 60000)),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			w.change(m, true)
			w.write("assigned", map[string]any{"partitions": parts(m)})
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
			w.write("revoked", map[string]any{"partitions": parts(m)})
			w.change(m, false)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			w.write("lost", map[string]any{"partitions": parts(m)})
			w.change(m, false)
		}),
	}
	if len(topics) > 0 {
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	joined := map[string]any{}
	if id := str(spec, "instance_id", ""); id != "" {
		opts = append(opts, kgo.InstanceID(id))
		joined["instance_id"] = id
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		w.write("error", map[string]any{"error": err.Error()})
		os.Exit(3)
	}
	w.cl = cl
	commands := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			commands <- strings.TrimSpace(sc.Text())
		}
		commands <- "eof"
	}()
	subscribed := len(topics) > 0
	if subscribed {
		w.write("joined", joined)
	}
	every := ms(spec, "commit_interval_ms", 1000)
	next := time.Now().Add(every)
	ctx := context.Background()
	for {
		select {
		case cmd := <-commands:
			switch {
			case cmd == "leave" || cmd == "eof":
				w.commit(ctx)
				cl.Close() // leaves the group (a static member does not send LeaveGroup, as in Kafka's clients)
				w.write("left", nil)
				os.Exit(0)
			case strings.HasPrefix(cmd, "pause "):
				s, _ := strconv.ParseFloat(strings.TrimSpace(cmd[6:]), 64)
				time.Sleep(time.Duration(s * float64(time.Second)))
			case strings.HasPrefix(cmd, "subscribe "):
				cl.AddConsumeTopics(strings.Split(strings.TrimSpace(cmd[10:]), ",")...)
				if !subscribed {
					subscribed = true
					w.write("joined", joined)
				}
			}
		default:
		}
		if !subscribed {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		fetches := cl.PollFetches(pctx)
		cancel()
		for _, fe := range fetches.Errors() {
			if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
				continue
			}
			w.recordError(fe.Err)
		}
		snap, _ := json.Marshal(parts(w.ownedMap()))
		if string(snap) != w.lastSnap {
			w.lastSnap = string(snap)
			w.write("snapshot", map[string]any{"partitions": parts(w.ownedMap())})
		}
		if every > 0 && time.Now().After(next) {
			next = time.Now().Add(every)
			w.commit(ctx)
		}
	}
}
