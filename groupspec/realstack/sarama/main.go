// One sarama consumer (github.com/IBM/sarama, the Go Kafka client) in its own process, recording what it observes
// as trace lines (the project's trace format), driven by the real-stack harness like its other workers. The classic
// protocol only: sarama has no group.protocol=consumer (KIP-848) client.
//
// Run as `sarama-worker SPEC_JSON`. The spec names the bootstrap address, the group, the topics, the member, the
// protocol (eager: classic with sarama's range strategy; cooperative: classic with its cooperative-sticky strategy,
// KIP-429, new in sarama 1.61; static: eager with a group.instance.id, which sarama calls Consumer.Group.InstanceId),
// the timeouts, the clock origin (origin_ms) and the file to append lines to; each line is written at once, so a
// SIGKILL loses nothing already observed.
//
// sarama has no rebalance listener. What is recorded, and from where:
//   - eager: assigned (the whole assignment) in the handler's Setup, revoked (everything owned) in Cleanup, which
//     sarama runs at the end of every generation's session;
//   - cooperative: one session lives across rebalances. assigned (the partitions added) when the session's claims
//     gain partitions (Setup, the first ConsumeClaim of a new generation, or the 20 ms watch); revoked (one
//     partition a line) when a claim's handler is stopped by a revocation, before sarama continues with the
//     follow-up join; whatever is owned when the session ends is revoked in Cleanup.
// Also joined at start; a snapshot of the owned partitions when they change; a commit of the consumed positions
// every commit_interval_ms, sent to the group coordinator as an OffsetCommit with the session's member id and
// generation (whether it was accepted); fenced for the errors that reject a member, error for any other; left
// after a clean close. Standard input carries the harness's commands, one a line: leave; pause SECONDS (every
// claim handler stops reading for that long, as a stuck poll loop would; sarama's heartbeats go on in their own
// goroutine); subscribe T1,T2 (sarama takes the topics per Consume call, so the session ends and the member
// rejoins with the new subscription). The end of input is leave.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// the errors' names as Kafka's protocol spells them (sarama's KError prints a sentence)
var kerrNames = map[sarama.KError]string{
	sarama.ErrUnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION", sarama.ErrOffsetsLoadInProgress: "COORDINATOR_LOAD_IN_PROGRESS",
	sarama.ErrConsumerCoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE", sarama.ErrNotCoordinatorForConsumer: "NOT_COORDINATOR",
	sarama.ErrIllegalGeneration: "ILLEGAL_GENERATION", sarama.ErrUnknownMemberId: "UNKNOWN_MEMBER_ID",
	sarama.ErrRebalanceInProgress: "REBALANCE_IN_PROGRESS", sarama.ErrMemberIdRequired: "MEMBER_ID_REQUIRED",
	sarama.ErrGroupMaxSizeReached: "GROUP_MAX_SIZE_REACHED", sarama.ErrFencedInstancedId: "FENCED_INSTANCE_ID",
	sarama.ErrInconsistentGroupProtocol: "INCONSISTENT_GROUP_PROTOCOL", sarama.ErrUnsupportedVersion: "UNSUPPORTED_VERSION",
}

var fencing = map[string]bool{"UNKNOWN_MEMBER_ID": true, "ILLEGAL_GENERATION": true, "FENCED_INSTANCE_ID": true}

type tp struct {
	t string
	p int32
}

type worker struct {
	mu          sync.Mutex
	origin      float64
	member      string
	group       string
	protocol    string
	out         *os.File
	owned       map[tp]bool
	sess        sarama.ConsumerGroupSession
	positions   map[tp]int64 // next offset to consume, of what the handlers read
	committed   map[tp]int64
	pausedUntil time.Time
	closing     bool
	seenClaims  uintptr // the claims map last reconciled with owned (sarama stores a new map per generation)
	lastSnap    string
	lastErr     string
	lastAt      time.Time
}

func (w *worker) now() int64 {
	return int64(math.Floor(float64(time.Now().UnixNano())/1e6 - w.origin))
}

// write a line; the caller may hold w.mu (sess is read under it by the callers that change it)
func (w *worker) writeLocked(event string, fields map[string]any) {
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
	if w.sess != nil {
		if _, ok := line["generation"]; !ok {
			line["generation"] = w.sess.GenerationID()
		}
		if _, ok := line["member_id"]; !ok && w.sess.MemberID() != "" {
			line["member_id"] = w.sess.MemberID()
		}
	}
	b, _ := json.Marshal(line)
	w.out.Write(append(b, '\n'))
}

func (w *worker) write(event string, fields map[string]any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeLocked(event, fields)
}

func sortedParts(set map[tp]bool) [][]any {
	keys := make([]tp, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].t != keys[j].t {
			return keys[i].t < keys[j].t
		}
		return keys[i].p < keys[j].p
	})
	l := [][]any{}
	for _, k := range keys {
		l = append(l, []any{k.t, k.p})
	}
	return l
}

func claimSet(claims map[string][]int32) map[tp]bool {
	set := map[tp]bool{}
	for t, ps := range claims {
		for _, p := range ps {
			set[tp{t, p}] = true
		}
	}
	return set
}

// reconcileLocked, when the session's claims map is new (a new generation's), records owned partitions it no
// longer claims as revoked and the claims not yet owned as one assigned line (w.mu held; cooperative). An old map
// is not looked at again: a partition whose handler was just stopped by a revocation is still in it.
func (w *worker) reconcileLocked(s sarama.ConsumerGroupSession) {
	claims := s.Claims()
	ptr := reflect.ValueOf(claims).Pointer()
	if ptr == w.seenClaims {
		return
	}
	w.seenClaims = ptr
	w.droppedLocked(claims)
	w.gainedLocked(claims)
}

// gained records the claims not yet owned as one assigned line (w.mu held)
func (w *worker) gainedLocked(claims map[string][]int32) {
	added := map[tp]bool{}
	for k := range claimSet(claims) {
		if !w.owned[k] {
			added[k] = true
			w.owned[k] = true
		}
	}
	if len(added) > 0 || w.protocol != "cooperative" {
		w.writeLocked("assigned", map[string]any{"partitions": sortedParts(added)})
	}
}

// dropped records owned partitions the session no longer claims as revoked (w.mu held; cooperative only)
func (w *worker) droppedLocked(claimed map[string][]int32) {
	claims := claimSet(claimed)
	gone := map[tp]bool{}
	for k := range w.owned {
		if !claims[k] {
			gone[k] = true
			delete(w.owned, k)
		}
	}
	if len(gone) > 0 {
		w.writeLocked("revoked", map[string]any{"partitions": sortedParts(gone)})
	}
}

type handler struct{ w *worker }

func (h handler) Setup(s sarama.ConsumerGroupSession) error {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sess = s
	w.seenClaims = reflect.ValueOf(s.Claims()).Pointer()
	w.gainedLocked(s.Claims())
	return nil
}

func (h handler) Cleanup(s sarama.ConsumerGroupSession) error {
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeLocked("revoked", map[string]any{"partitions": sortedParts(w.owned)})
	w.owned = map[tp]bool{}
	return nil
}

func (h handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	w := h.w
	key := tp{c.Topic(), c.Partition()}
	if w.protocol == "cooperative" {
		w.mu.Lock()
		w.reconcileLocked(s)
		w.mu.Unlock()
	}
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		// stopped while the session goes on: sarama revoked this partition (cooperative)
		if w.protocol == "cooperative" && s.Context().Err() == nil && !w.closing && w.owned[key] {
			delete(w.owned, key)
			w.writeLocked("revoked", map[string]any{"partitions": [][]any{{key.t, key.p}}})
		}
	}()
	for {
		w.mu.Lock()
		wait := time.Until(w.pausedUntil)
		w.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
			continue
		}
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			w.mu.Lock()
			w.positions[key] = msg.Offset + 1
			w.mu.Unlock()
		case <-s.Context().Done():
			return nil
		}
	}
}

func errorName(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		if n, ok := kerrNames[ke]; ok {
			return n
		}
		return fmt.Sprintf("KError(%d)", int16(ke))
	}
	return err.Error()
}

func (w *worker) recordError(err error) {
	name := errorName(err)
	w.mu.Lock()
	defer w.mu.Unlock()
	if name == w.lastErr && time.Since(w.lastAt) < time.Second {
		return
	}
	w.lastErr, w.lastAt = name, time.Now()
	if fencing[name] {
		w.writeLocked("fenced", map[string]any{"error": name})
		return
	}
	detail := err.Error()
	if len(detail) > 200 {
		detail = detail[:200]
	}
	w.writeLocked("error", map[string]any{"error": name, "detail": detail})
}

// commit sends the consumed positions of owned partitions not yet committed, with the session's member id and
// generation, and records what the coordinator answered
func (w *worker) commit(client sarama.Client, cfg *sarama.Config, instanceID string) {
	w.mu.Lock()
	s := w.sess
	pending := map[tp]int64{}
	for k, off := range w.positions {
		if w.owned[k] && w.committed[k] != off {
			pending[k] = off
		}
	}
	w.mu.Unlock()
	if s == nil || len(pending) == 0 {
		return
	}
	keys := make([]tp, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].t != keys[j].t {
			return keys[i].t < keys[j].t
		}
		return keys[i].p < keys[j].p
	})
	req := sarama.NewOffsetCommitRequest(cfg, w.group)
	req.ConsumerGroupGeneration = s.GenerationID()
	req.ConsumerID = s.MemberID()
	if instanceID != "" {
		req.GroupInstanceId = &instanceID
	}
	listed := [][]any{}
	for _, k := range keys {
		req.AddBlock(k.t, k.p, pending[k], -1, "")
		listed = append(listed, []any{k.t, k.p, pending[k]})
	}
	name := ""
	coord, err := client.Coordinator(w.group)
	if err == nil {
		var resp *sarama.OffsetCommitResponse
		resp, err = coord.CommitOffset(req)
		if err == nil {
			for _, k := range keys {
				if e := resp.Errors[k.t][k.p]; e != sarama.ErrNoError && name == "" {
					name = errorName(e)
				}
			}
		}
	}
	if err != nil {
		name = errorName(err)
	}
	if name != "" {
		w.write("commit", map[string]any{"partitions": listed, "accepted": false, "error": name})
		return
	}
	w.mu.Lock()
	for _, k := range keys {
		w.committed[k] = pending[k]
	}
	w.mu.Unlock()
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
		fmt.Fprintln(os.Stderr, "sarama-worker: bad spec:", err)
		os.Exit(2)
	}
	out, err := os.OpenFile(str(spec, "out", ""), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-worker:", err)
		os.Exit(2)
	}
	w := &worker{origin: spec["origin_ms"].(float64), member: str(spec, "member", ""), group: str(spec, "group", "g"),
		protocol: str(spec, "protocol", "eager"), out: out, owned: map[tp]bool{}, positions: map[tp]int64{},
		committed: map[tp]int64{}}
	if w.protocol == "consumer" {
		w.write("error", map[string]any{"error": "sarama has no group.protocol=consumer (KIP-848) client"})
		os.Exit(3)
	}
	var topics []string
	if ts, ok := spec["topics"].([]any); ok {
		for _, t := range ts {
			topics = append(topics, t.(string))
		}
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.ClientID = w.member
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = ms(spec, "session_timeout_ms", 10000)
	cfg.Consumer.Group.Heartbeat.Interval = ms(spec, "heartbeat_interval_ms", 3000)
	cfg.Consumer.Group.Rebalance.Timeout = ms(spec, "max_poll_interval_ms", 60000)
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	if w.protocol == "cooperative" {
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyCooperativeSticky()}
	}
	joined := map[string]any{}
	instanceID := str(spec, "instance_id", "")
	if instanceID != "" {
		cfg.Consumer.Group.InstanceId = instanceID
		joined["instance_id"] = instanceID
	}
	client, err := sarama.NewClient([]string{str(spec, "bootstrap", "")}, cfg)
	if err != nil {
		w.write("error", map[string]any{"error": err.Error()})
		os.Exit(3)
	}
	cg, err := sarama.NewConsumerGroupFromClient(w.group, client)
	if err != nil {
		w.write("error", map[string]any{"error": err.Error()})
		os.Exit(3)
	}
	go func() {
		for err := range cg.Errors() {
			w.recordError(err)
		}
	}()

	var subMu sync.Mutex
	var stopSession context.CancelFunc
	consumeDone := make(chan struct{})
	start := func() {
		go func() {
			defer close(consumeDone)
			for {
				subMu.Lock()
				ts := append([]string(nil), topics...)
				ctx, cancel := context.WithCancel(context.Background())
				stopSession = cancel
				subMu.Unlock()
				err := cg.Consume(ctx, ts, handler{w})
				cancel()
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				if err != nil {
					w.recordError(err)
					time.Sleep(100 * time.Millisecond)
				}
				w.mu.Lock()
				closing := w.closing
				w.mu.Unlock()
				if closing {
					return
				}
			}
		}()
	}
	subscribed := len(topics) > 0
	if subscribed {
		w.write("joined", joined)
		start()
	}
	commands := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			commands <- strings.TrimSpace(sc.Text())
		}
		commands <- "eof"
	}()
	every := ms(spec, "commit_interval_ms", 1000)
	next := time.Now().Add(every)
	tick := time.NewTicker(20 * time.Millisecond)
	for {
		select {
		case cmd := <-commands:
			switch {
			case cmd == "leave" || cmd == "eof":
				w.commit(client, cfg, instanceID)
				w.mu.Lock()
				w.closing = true
				w.mu.Unlock()
				cg.Close() // ends the session (Cleanup) and leaves the group (a static member sends no LeaveGroup)
				if subscribed {
					<-consumeDone
				}
				w.write("left", nil)
				client.Close()
				os.Exit(0)
			case strings.HasPrefix(cmd, "pause "):
				s, _ := strconv.ParseFloat(strings.TrimSpace(cmd[6:]), 64)
				w.mu.Lock()
				w.pausedUntil = time.Now().Add(time.Duration(s * float64(time.Second)))
				w.mu.Unlock()
			case strings.HasPrefix(cmd, "subscribe "):
				subMu.Lock()
				topics = strings.Split(strings.TrimSpace(cmd[10:]), ",")
				stop := stopSession
				subMu.Unlock()
				if !subscribed {
					subscribed = true
					w.write("joined", joined)
					start()
				} else if stop != nil {
					stop() // the session ends; the loop rejoins with the new topics
				}
			}
		case <-tick.C:
		}
		w.mu.Lock()
		if w.protocol == "cooperative" && w.sess != nil && w.sess.Context().Err() == nil {
			w.reconcileLocked(w.sess)
		}
		snap, _ := json.Marshal(sortedParts(w.owned))
		changed := string(snap) != w.lastSnap
		if changed {
			w.lastSnap = string(snap)
			w.writeLocked("snapshot", map[string]any{"partitions": sortedParts(w.owned)})
		}
		paused := time.Now().Before(w.pausedUntil)
		w.mu.Unlock()
		if every > 0 && time.Now().After(next) && !paused {
			next = time.Now().Add(every)
			w.commit(client, cfg, instanceID)
		}
	}
}
