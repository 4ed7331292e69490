"""Equivalent mutants: changes of the model that no execution can observe, each with the reason.

Every name here is also explained in docs/specification.md ("Equivalent mutants"); a survivor not listed
here is a gap in the checks, and ``groupspec verify --spec-mutants`` fails on it. A name whose mutant no
longer exists (the model changed) is reported by ``tests/test_spec_mutants.py``.

May import: nothing.
"""
from __future__ import annotations

import re

EQUIVALENT: dict[str, str] = {
    "join_phase.JoinPhase._remove:drop-term#6":
        "the UNKNOWN_MEMBER_ID it also leaves on a process that is down is never received: only a running process "
        "takes its inbox, the properties read the inbox of running or paused processes only, and a down process "
        "comes back only through Start, a fresh client with no inbox",
    "properties.ClassicObservations.commit_violation:drop-term#4":
        "with commits fenced (every correct variant) a ghost's commit is never accepted, so commit_accepted "
        "skips it before its owned partitions are read; the one classic variant with unfenced commits "
        "(unfenced-commits) is eager, without static members, so it has no ghosts",
    "static_leader.StaticLeaderSnapshot._static_replace:drop-term#0":
        "outside STABLE a replaced static leader's JoinGroup goes through a join phase that completes before the "
        "group is STABLE again (PREPARING_REBALANCE waits for it, COMPLETING_REBALANCE is forced back to it, "
        "KAFKA-9801), and the completion takes the snapshot again; only NoticeMetadata reads it, in a STABLE group",
    "properties.ClassicObservations.generation_violation:drop-term#11":
        "with the group's generation one higher (d == 1) an untouched client's generation is at most the group's "
        "old one (no client starts ahead of the group, and a step that put one ahead was reported then), so "
        "neither check fires on it: the conjunct d == 0 only saves the work",
    "consumer.Consumer.successors:drop-guard#3":
        "the steps it adds are heartbeats that change nothing (t == s): a stutter adds no state and no changing "
        "step, and every property reads states and changing steps only (the consumer walks send these heartbeats "
        "to Kafka, whose group does not change either)",
    "consumer.Consumer.compute_target:drop-guard#0":
        "a memo cache: _compute_target reads only the members' topics and static flags, the target and the "
        "partitions, which are the cache key, so computing it afresh every time changes nothing but the speed",
    "migration.ClassicToConsumer.cooperative_assignment:drop-guard#0":
        "a memo cache: the assignment is computed from the members and the reported owned partitions only, which "
        "are the cache key, so computing it afresh every time changes nothing but the speed",
    "classic.ClassicProtocol.successors:timer-early#2":
        "_rebalance_timer yields only when some record has joined and some other has not: outside "
        "PREPARING_REBALANCE no record has joined set, and while the group forms every record was created by a "
        "JoinGroup of that join phase (so all have joined), so calling it there too adds no step",
    "properties.ClassicObservations.generation_violation:drop-term#0":
        "a client record that is the same object (a is b) has the same generation, so the conjunct a is not b is "
        "implied by a.generation != b.generation",
    "classic.ClassicProtocol._perturbations:drop-term#7":
        "a process is PAUSED only through Pause, which is generated only with the zombie fault, so the "
        "conjunct 'zombie' in faults is implied by c.proc == PAUSED",
    "classic.ClassicProtocol._perturbations:drop-term#15":
        "crashing a process that is already down leaves it as it was (a down client holds only its "
        "subscription and its ghost), so the added step changes nothing but the perturbation budget",
    "consumer.Consumer.init_states:drop-term#5":
        "init_states only chooses the explored instance (whether the last partition exists at the start); "
        "no rule of the protocol reads it, and the conformance harness starts from the reference's state",
    "consumer.Consumer.step:negate-guard#0":
        "step(s, a) only replays a counterexample for its timeline (and the model's traces); every check "
        "explores successors(s) itself",
    "consumer.Consumer._bump:off-by-one#0":
        "the comparison is read only when bump_on_change is off, that is in the broken variant "
        "consumer-no-epoch-bump; every correct variant bumps the epoch before reaching it",
    "classic.ClassicProtocol.successors:drop-term#12":
        "the late-expiry flag set on a resumed process holding a stale id: such a process is not alive, so "
        "SessionExpired is enabled for its record anyway; the flag is cleared when its next join phase completes, "
        "and _late_expirable excludes the parked JoinGroup in between",
    "classic.ClassicProtocol.successors:drop-term#21":
        "outside PREPARING_REBALANCE no record has joined set (completing a join phase clears it, and a JoinGroup "
        "sets it only after the group moved to PREPARING_REBALANCE), and the rebalance timer yields nothing then",
    "classic.ClassicProtocol.successors:drop-term#17":
        "outside PREPARING_REBALANCE no record has joined set (as for successors:drop-term#21), so r.joined alone "
        "implies the conjunct g.status == PREPARING_REBALANCE it leaves out",
    "join_phase.JoinPhase._remove:negate-guard#1":
        "the late-expiry flag a removed member keeps is read by nothing: SessionExpired and _late_expirable need a "
        "record, the process's next record is created by its JoinGroup parked in a join phase (which _late_expirable "
        "excludes), and that phase's completion clears the flag of every member present (_complete_join); explored "
        "exhaustively, the mutant's transitions with the flag projected away are the unchanged model's",
    "classic.ClassicProtocol._perturbations:drop-term#18":
        "self.alive(s, i) already requires a record (s.group.records[i] is not None), so the conjunct r is not None "
        "is implied",
    "classic.ClassicProtocol.step:drop-guard#0":
        "step(s, a) only replays a counterexample for its timeline (and the model's traces), always with an action "
        "successors(s) offered; every check explores successors(s) itself",
    "formation.FormationRules._poll_timeout_steps:drop-term#0":
        "its only caller (ClassicProtocol._perturbations) calls it under if self.poll_timeout, so the conjunct "
        "self.poll_timeout is implied",
    "join_phase.JoinPhase.compute_target:drop-guard#2":
        "with no partition moving (moving == 0) the body clears moving & ~owned = 0 from each target: no change; "
        "the guard only saves the loop",
    "properties.ClassicObservations.live_ownership:drop-term#0":
        "the added entries own nothing, and every reader intersects or iterates the owned partitions "
        "(exclusive_ownership, commit_violation, the Connect duplicate check, the migration's commit check, the "
        "trace's fenced events of members that own something): an empty set adds nothing",
    "properties.ClassicObservations.generation_violation:drop-guard#1":
        "the checks it now also runs are on a client whose generation did not change while the group did not "
        "move: its generation did not go down, and it is ahead of the group only if it was before, which the step "
        "that put it there reported (as for generation_violation:drop-term#11)",
    "classic.ClassicProtocol.successors:timer-early#4":
        "the guard only saves a call: every step _formation_steps yields is guarded inside by the same condition "
        "(forming, a pending id, a stale pending-sync id, the sync-timeout fault)",
    "classic.ClassicProtocol.converged:drop-term#6":
        "a group is EMPTY only at the start or when a join phase completes with nobody, so it has no record then: the conjunct is implied",
    "classic.ClassicProtocol._perturbations:drop-guard#1":
        "the steps it adds for a process that is not running change nothing a rule reads: a paused process's LeaveGroup is Resume then LeaveGroup (same states, same budget), a down process's LeaveGroup or a second Pause only spends budget, and a paused process's subscription change is Resume, the change, Pause again with one unit of perturbation budget less (the budget bounds the exploration; it is no rule of the protocol)",
    "zookeeper.ZooKeeper.step:drop-guard#0":
        "step(s, a) only replays a counterexample for its timeline; every check explores successors(s) itself",
    # the kip848 spread's survivors (issue 30, the KIP-848 client checks' pass; docs/specification.md, "The client
    # checks of the consumer protocol")
    # (consumer.Consumer.successors:off-by-one#2 and drop-term#26, the expiry and the pause also at epoch 0, judged
    # equivalent here before, are the model's rule since issue 30's k848d pass: docs/specification.md, "KIP-848: the
    # faults at epoch 0"; the sites after them in successors moved down: drop-term#30 is now #28)
    "consumer.Consumer.successors:drop-term#20":
        "for a paused member SessionExpired already takes the very same step (the member removed, the group epoch "
        "bumped); the added steps reach the same states (ExpireLive with one unit of budget less)",
    "consumer.Consumer.successors:drop-term#6":
        "for a paused member SessionExpired already takes the very same step (the member removed, the group epoch "
        "bumped); the added steps reach the same states (ExpireLive with one unit of budget less)",
    "consumer.Consumer.successors:drop-term#22":
        "the expiries it adds are of a static member that left (epoch -2) while a new process with its instance id "
        "runs and has not yet heartbeated: Kafka's too (the left member's session runs out whatever the new process "
        "does), and each reaches a state the unchanged model reaches with more budget left (SessionExpired while the "
        "process was down, then Start): no new state, the guard only spares budget",
    "consumer.Consumer.successors:drop-term#10":
        "only a static member's leave sets left, so r.left implies it",
    "consumer.Consumer.successors:drop-term#0":
        "a running process always has epoch 0 or more (Start, EarlyRestart give 0; only a process that is down has "
        "-1)",
    "consumer.Consumer.successors:negate-guard#12":
        "it crashes a process that is already down (which leaves it as it was: a down client holds only its "
        "subscription) and moves crashes to instances without the crash fault: which perturbations an instance allows "
        "is its choice (as FAULT_SELECTION)",
    "consumer.Consumer._bump:drop-term#1":
        "read only when bump_on_change / lose_on_fence is off, that is in the broken variants consumer-no-epoch-bump "
        "and consumer-fenced-keeps-partitions (whose violations are still found); every correct variant short- "
        "circuits before",
    "consumer.Consumer.apply_answer:drop-term#1":
        "read only when bump_on_change / lose_on_fence is off, that is in the broken variants consumer-no-epoch-bump "
        "and consumer-fenced-keeps-partitions (whose violations are still found); every correct variant short- "
        "circuits before",
    "consumer.Consumer.handle:drop-term#4":
        "read only with kafka_19233 off (the epoch-0 validation before KAFKA-19233), which no variant sets",
    "consumer.Consumer.handle:off-by-one#3":
        "read only with kafka_19233 off (the epoch-0 validation before KAFKA-19233), which no variant sets",
    "consumer.Consumer.handle:drop-term#8":
        "in every reachable state a client at its member's previous epoch owns a subset of the member's assignment: "
        "the member's epoch moves only on a heartbeat that reported exactly what the client owns with nothing pending "
        "revocation, and its assignment shrinks only together with a new previous epoch (_next_assignment, the "
        "subscription drop); explored on four in-flight instances (3,384 such client states, none outside)",
    "consumer.Consumer.reconcile:drop-guard#4":
        "a member in UNREVOKED_PARTITIONS already has its previous epoch equal to its epoch (set as it entered that "
        "state), so the record written is the one it had",
    "consumer.Consumer.apply_answer:drop-term#3":
        "with nothing to revoke and nothing to add, owned already equals assigned: the same value is written",
    "consumer.Consumer.successors:negate-guard#16":
        "it moves the metadata change past the perturbation budget (which it then overdraws by one); a partition may "
        "be added at any time in Kafka, and which perturbations an instance allows, with which budget, is its choice "
        "(as FAULT_SELECTION)",
    "consumer.Consumer.successors:drop-term#28":
        "it moves the metadata change past the perturbation budget (which it then overdraws by one); a partition may "
        "be added at any time in Kafka, and which perturbations an instance allows, with which budget, is its choice "
        "(as FAULT_SELECTION)",
    "consumer_flight.ConsumerFlight.flight_successors:drop-guard#6":
        "fault selection again: the step is that fault's, generated anyway where it is selected",
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#6":
        "such an answer carries the client's own epoch and assignment: lost, it changes nothing; held, the client "
        "sends no other heartbeat meanwhile and only its own revocation moves it, after which applying the answer is "
        "the identity",
    "consumer_flight.ConsumerFlight.flight_successors:keep-assigned#0":
        "the process restarted is down, and a down client's assignment is already empty (Crash, LeaveGroup and a "
        "fatal answer leave only its subscription)",
    "consumer.Consumer.commit_answer:off-by-one#1":
        "the equal epoch has returned OK just before",
    "consumer.Consumer.live_member:drop-term#1":
        "a client at epoch 0 owns nothing and its commits in flight are judged without live_member; a static member "
        "that left has a process that is down or a new one at epoch 0",
    "consumer.Consumer.live_member:drop-term#3":
        "a client at epoch 0 owns nothing and its commits in flight are judged without live_member; a static member "
        "that left has a process that is down or a new one at epoch 0",
    "consumer.Consumer.step:drop-guard#0":
        "step(s, a) only replays a counterexample for its timeline (as consumer.Consumer.step:negate-guard#0); every "
        "check explores successors(s) itself",
    "consumer.Consumer._rows:drop-guard#0":
        "how the checker stores states (the state key: positive epochs then encoded absolutely, 100 - e, injective at "
        "the explored bounds; the symmetry reduction switched on for the range assignor), not a rule of the protocol: "
        "judged as symmetry.py, which the campaign does not mutate. (The second would merge states the range assignor "
        "tells apart; the checker's own tests, not a fidelity check, are where it belongs.)",
    "consumer.Consumer.key:negate-guard#0":
        "how the checker stores states (the state key: positive epochs then encoded absolutely, 100 - e, injective at "
        "the explored bounds; the symmetry reduction switched on for the range assignor), not a rule of the protocol: "
        "judged as symmetry.py, which the campaign does not mutate. (The second would merge states the range assignor "
        "tells apart; the checker's own tests, not a fidelity check, are where it belongs.)",
    "consumer.Consumer.key:negate-guard#3":
        "how the checker stores states (the state key: positive epochs then encoded absolutely, 100 - e, injective at "
        "the explored bounds; the symmetry reduction switched on for the range assignor), not a rule of the protocol: "
        "judged as symmetry.py, which the campaign does not mutate. (The second would merge states the range assignor "
        "tells apart; the checker's own tests, not a fidelity check, are where it belongs.)",
    "consumer.relative_epoch:negate-guard#0":
        "how the checker stores states (the state key: positive epochs then encoded absolutely, 100 - e, injective at "
        "the explored bounds; the symmetry reduction switched on for the range assignor), not a rule of the protocol: "
        "judged as symmetry.py, which the campaign does not mutate. (The second would merge states the range assignor "
        "tells apart; the checker's own tests, not a fidelity check, are where it belongs.)",
    "consumer.Consumer.__init__:drop-term#0":
        "how the checker stores states (the state key: positive epochs then encoded absolutely, 100 - e, injective at "
        "the explored bounds; the symmetry reduction switched on for the range assignor), not a rule of the protocol: "
        "judged as symmetry.py, which the campaign does not mutate. (The second would merge states the range assignor "
        "tells apart; the checker's own tests, not a fidelity check, are where it belongs.)",
    # the rolling upgrade's and Connect's (the upgrade and Connect client checks' pass), the ZooKeeper era's and the
    # migration's (their pass): docs/specification.md, the last three subsections
    "upgrade.EagerToCooperative._join:drop-term#5":
        "setting owned=0 on an eager member that owns nothing yields the same state",
    "upgrade.EagerToCooperative._receive_join:drop-term#5":
        "the leader holds a JoinGroup answer of the current generation only while the group is COMPLETING_REBALANCE: "
        "a new join phase or an emptied group clears the target, and the group is STABLE only after the leader's own "
        "SyncGroup, which consumes that answer (no state of 2x2 budget 2 with every fault and the timers, 3x2 budget "
        "1, 3x3 has one)",
    "join_phase.JoinPhase.compute_target:negate-guard#1":
        "held work is never given back by it: existing & ~held_back keeps held work out of every assignment, and "
        "every assignor a Connect variant runs reads a member's owned work only within existing (sticky: owned & "
        "claimable, the existing partitions of subscribed topics; range and roundrobin read none), so filtering the "
        "members' reported work is redundant (the reachable state graphs compared edge for edge at 2x2 b2, 3x2 b1, "
        "2x3 b2, every Connect fault)",
    "connect_delayed.ConnectKeepWork._kept:drop-term#2":
        "none of the handlers _kept wraps stops a Connect worker (FENCED_INSTANCE_ID is for static members; Connect "
        "has no static membership)",
    "connect_delayed.ConnectKeepWork._kept:drop-guard#0":
        "those handlers change a Connect worker's work only by a reset, which leaves it UNJOINED, in no generation, "
        "owning nothing: every condition the mutant drops is then true anyway (the reachable state graphs compared "
        "edge for edge at 2x2 b2, 3x2 b1, 2x3 b2, every Connect fault)",
    "connect_delayed.ConnectKeepWork._kept:drop-term#0":
        "those handlers change a Connect worker's work only by a reset, which leaves it UNJOINED, in no generation, "
        "owning nothing: every condition the mutant drops is then true anyway (the reachable state graphs compared "
        "edge for edge at 2x2 b2, 3x2 b1, 2x3 b2, every Connect fault)",
    "connect_delayed.ConnectKeepWork._kept:drop-term#1":
        "those handlers change a Connect worker's work only by a reset, which leaves it UNJOINED, in no generation, "
        "owning nothing: every condition the mutant drops is then true anyway (the reachable state graphs compared "
        "edge for edge at 2x2 b2, 3x2 b1, 2x3 b2, every Connect fault)",
    "connect_delayed.ConnectKeepWork._kept:drop-term#3":
        "those handlers change a Connect worker's work only by a reset, which leaves it UNJOINED, in no generation, "
        "owning nothing: every condition the mutant drops is then true anyway (the reachable state graphs compared "
        "edge for edge at 2x2 b2, 3x2 b1, 2x3 b2, every Connect fault)",
    "connect_delayed.ConnectKeepWork._kept:drop-term#4":
        "those handlers change a Connect worker's work only by a reset, which leaves it UNJOINED, in no generation, "
        "owning nothing: every condition the mutant drops is then true anyway (the reachable state graphs compared "
        "edge for edge at 2x2 b2, 3x2 b1, 2x3 b2, every Connect fault)",
    "zookeeper.ZooKeeper._rebalance:keep-owned#0":
        "_claim, called right after, sets owned on both of its paths (the share, or nothing), so what _rebalance left "
        "there is never read",
    "zookeeper.ZooKeeper._claim:keep-owned#0":
        "a claim fails only for a consumer that owns nothing already: _rebalance emptied it, or its previous claim "
        "failed (a pending retry)",
    "zookeeper.ZooKeeper.init_states:drop-term#1":
        "only a one-consumer instance with the join fault differs (its one consumer starts down); which consumer "
        "starts late is a choice of the explored instance, no rule of the protocol",
    "zookeeper.ZooKeeper.step:negate-guard#0":
        "step(s, a) only replays a counterexample for its timeline (as step:drop-guard#0); every check explores "
        "successors(s) itself",
    "zookeeper.ZooKeeper.live_member:drop-term#0":
        "a consumer that is down owns nothing (Crash and LeaveGroup reset it), and live_member is read only beside "
        "owned partitions",
    "zookeeper.ZooKeeper.live_ownership:drop-term#0":
        "the entries added own nothing; every reader takes the owned partitions' bits or skips members that own "
        "nothing",
    "zookeeper.ZooKeeper.running_ownership:drop-term#0":
        "the entries added own nothing; every reader takes the owned partitions' bits or skips members that own "
        "nothing",
    "zookeeper.ZooKeeper.running_ownership:drop-guard#0":
        "the consumers added are paused (a down one owns nothing); a paused consumer's Resume, always enabled and "
        "changing nothing else, makes it a running one with the same partitions, so exclusive_processing is violated "
        "with or without them",
    "zookeeper.ZooKeeper.running_ownership:drop-term#1":
        "the consumers added are paused (a down one owns nothing); a paused consumer's Resume, always enabled and "
        "changing nothing else, makes it a running one with the same partitions, so exclusive_processing is violated "
        "with or without them",
    "zookeeper.ZooKeeper.commit_violation:negate-guard#2":
        "only the explanation's wording changes (which cN now owns); the verdict is the same",
    "zookeeper.ZooKeeper.converged:drop-term#4":
        "implied by the loop: with an empty registry nothing is owned (so everything is not every partition), and "
        "when every registered consumer runs and owns its range share over the registry, the shares cover every "
        "partition",
    "zookeeper.ZooKeeper.converged:drop-term#5":
        "implied by the loop: with an empty registry nothing is owned (so everything is not every partition), and "
        "when every registered consumer runs and owns its range share over the registry, the shares cover every "
        "partition",
    "zookeeper.ZooKeeper.converged:drop-term#0":
        "it calls converged a state where every consumer is down but some session has not expired; from there the "
        "sessions' expiries (protocol steps, fair) lead to the empty registry, converged in the unchanged model too, "
        "and no fault can keep them from it, so no convergence verdict changes",
    "migration.ClassicToConsumer._classic_remove:drop-term#0":
        "only a classic client parks a JoinGroup (phase WAIT; a consumer-protocol client's phase stays STABLE), and "
        "only members of the classic group, all classic, are removed from it",
    # (migration.ClassicToConsumer.successors:drop-term#5, judged equivalent here before, is killed since issue 30's
    # migration full run: the conformance driver refuses the LeaveGroup the Upgrade of a paused member sends)
    # issue 30 (the fifth campaign's gaps): docs/specification.md, its last subsection
    "connect_delayed._settled:drop-term#1":
        "a live worker (live_ownership reads only those) whose generation differs from the group's is behind it "
        "(never ahead: generation_monotonic, which every explorer job checks) and then live_member requires a "
        "JoinGroup answer of the current generation in its inbox, which c.inbox is None already rules out; a STABLE "
        "worker never has one anyway (see _settled:drop-term#2). Shown by the predicates compared on every reachable "
        "state: no difference at 2x2 b2 and b3, 3x2 b1, 2x3 b2, both Connect variants, every Connect fault and timer",
    "connect_delayed._settled:drop-term#2":
        "a STABLE worker never has an answer in its inbox: the model puts one only on a JoinGroup or SyncGroup in "
        "flight (PREPARING_REBALANCE or COMPLETING_REBALANCE: the immediate and the completing JoinGroup answers, the "
        "SyncGroup answers, REBALANCE_IN_PROGRESS and UNKNOWN_MEMBER_ID to a parked request), a heartbeat is answered "
        "in its own step, and ReceiveSyncResponse, the only step to STABLE, consumes the inbox. Shown by the predicates "
        "compared on every reachable state: no live STABLE worker with an inbox, no difference, at 2x2 b2 and b3, 3x2 "
        "b1, 2x3 b2, both Connect variants, every Connect fault and timer",
    # issue 30, the migration family's full run (docs/specification.md, "Migration survivors, full family run"); each
    # shown by tests/test_spec_mutants_migration.py on the reachable state graphs of 2x2 b2, 1x2 b3, 2x3 b2
    "migration.ClassicToConsumer.successors:drop-guard#2":
        "a running consumer-protocol client never has a negative epoch: it starts at 0 (_restart) and the KIP-848 "
        "heartbeat sets it from the coordinator's answers (0 to rejoin); a stopped one is down. The reachable state "
        "graphs are identical, edge for edge",
    "migration.ClassicToConsumer.successors:drop-guard#3":
        "the steps it adds are heartbeats that change nothing (t == s): a stutter adds no state and no changing step, "
        "and every property reads states and changing steps only (as consumer.Consumer.successors:drop-guard#3); "
        "every added edge is a self-loop",
    "migration.ClassicToConsumer.successors:drop-guard#4":
        "the steps it adds revoke nothing (owned & assigned == owned): self-loops, a stutter that no property reads "
        "(as successors:drop-guard#3)",
    "migration.ClassicToConsumer.successors:drop-term#4":
        "a running consumer-protocol client whose member record exists always has a positive epoch: the record is "
        "made by its epoch-0 heartbeat, whose answer gives it the member epoch in the same step, and a removal that "
        "sends it back to 0 removes the record too. The reachable state graphs are identical, edge for edge",
    "migration.ClassicToConsumer.successors:off-by-one#1":
        "a running consumer-protocol client whose member record exists never has epoch 0 (see successors:drop-term#4): "
        "the reachable state graphs are identical, edge for edge",
    "migration.ClassicToConsumer.live_member:off-by-one#0":
        "no reachable state has a consumer-protocol client that is not down, whose member record exists, at epoch 0 "
        "(see successors:drop-term#4), so live_member answers the same on every reachable state",
    "migration.ClassicToConsumer.successors:drop-guard#16":
        "crashing a process that is already down leaves it as it was (a down client holds only its protocol and its "
        "subscription), so the added step changes nothing but the perturbation budget (as the classic "
        "_perturbations:drop-term#15); the reachable states are the same",
    "migration.ClassicToConsumer.successors:drop-term#15":
        "crashing a process that is already down leaves it as it was (see successors:drop-guard#16)",
    "migration.ClassicToConsumer.successors:drop-term#10":
        "a perturbation's selection: Start of a running process that is no member is the operator restarting it "
        "(a Crash and a Start in one step; being no member, it has no member to leave): the rules the restarted client "
        "meets are untouched; the reachable states are the same, only perturbation edges are added",
    "migration.ClassicToConsumer.generation_violation:drop-guard#1":
        "while the group is classic its consumer-group field is the empty consumer group (every step that makes a "
        "classic state builds it with the empty one, every classic step keeps it): run on a classic state, the "
        "consumer checks read group epoch 0, assignment epoch 0 and no member, and none of them fires",
    "migration.ClassicToConsumer.generation_violation:drop-term#15":
        "implied: a process changes protocol only by a restart (Upgrade to epoch 0, Downgrade to no generation, -1), "
        "so in a step where ca.classic != cb.classic the client's new epoch is never positive and cb.epoch > 0 fails",
    "migration.ClassicToConsumer._remove:drop-term#2":
        "implied: a consumer group keeps a consumer-protocol member as long as it has members (_settle downgrades it "
        "after every step that leaves only classic ones, and a classic JoinGroup into a group with no member deletes "
        "it), so removing a classic member never leaves only classic members. The reachable state graphs are "
        "identical, edge for edge",
    "migration.ClassicToConsumer._converged_consumer:drop-term#2":
        "a consumer-protocol client's phase is always STABLE (it is made by _restart or a reset with the default phase, "
        "and only the classic steps set a phase), so c.phase != STABLE implies c.classic",
    # issue 30, the KIP-848 survivors of the full family run (docs/specification.md, "KIP-848 survivors, full family
    # run"; each shown in tests/test_spec_mutants_kip848.py)
    "consumer.Consumer.successors:timer-never#1":
        "the rebalance timeout's step (RebalanceTimeoutFence) removes a paused member's record, which SessionExpired, "
        "enabled in every state where it is (the process not running, its record present), does with the same "
        "successor state: without it the reachable state graph is the same (edges compared without their labels)",
    "consumer.Consumer.successors:drop-term#16":
        "a running consumer with a member epoch whose record is there has not left: a static member that left is "
        "given a fresh client (not running, no epoch), and only its epoch-0 heartbeat takes the record back, so "
        "not r.left is implied; the reachable state graphs (with labels) are identical",
    "consumer.Consumer.successors:drop-term#11":
        "the Start it adds (a static member's process started while its record has not left) is the early-restart "
        "fault's EarlyRestart step with another label (a down client is a fresh one, so both give the same running "
        "client at epoch 0): a step of a fault, generated when that fault is selected, and the checks run with it "
        "selected; with early-restart selected the reachable state graphs (without labels) are identical",
    "consumer.Consumer.successors:drop-term#18":
        "crashing a process that is already down leaves it as it was (every way down, Crash, LeaveGroup, an "
        "UNRELEASED_INSTANCE_ID answer, the late consumer, gives a fresh client), so the added step changes nothing "
        "but the perturbation budget (as classic.ClassicProtocol._perturbations:drop-term#15); with the budget "
        "projected away the reachable states and changing steps are identical",
    "consumer.Consumer.successors:drop-guard#10":
        "it leaves out both conjuncts of the crash step's guard: the crash fault's selection (a choice of the "
        "instance, as FAULT_SELECTION) and c.proc != DOWN, whose step changes nothing but the budget (see "
        "successors:drop-term#18); with crash selected and the budget projected away the reachable graphs are identical",
    "consumer.Consumer.init_states:drop-term#1":
        "only a one-consumer instance with the join fault differs (its one consumer starts down); which consumer "
        "starts late is a choice of the explored instance, no rule of the protocol (as zookeeper.ZooKeeper."
        "init_states:drop-term#1)",
    "consumer.Consumer.key:drop-guard#0":
        "the symmetry reduction switched off for the uniform variants: the explorer then keys states exactly (up to "
        "the epoch shift every other variant uses), which only splits states the reduction merged as renamings of "
        "one another; every property is invariant under renaming members and the partitions of one topic, so no "
        "verdict changes (only the state counts do)",
    "consumer.Consumer.live_member:drop-term#0":
        "a process that is down has no member epoch: every way down (Crash, LeaveGroup, an UNRELEASED_INSTANCE_ID "
        "answer, the late consumer at the start) gives a fresh client at epoch -1, so c.epoch > 0 implies "
        "c.proc != DOWN; the predicate is the same on every reachable state",
    "consumer.Consumer.commit_violation:drop-term#0":
        "the current commit of a paused process, also read: a paused process is live while its record is there "
        "(Pause needs a member epoch) and nothing it holds changes while it is paused (no heartbeat, no answer), "
        "so whatever the coordinator would accept of it is what it accepted from the running process, already "
        "checked; once its record is removed the commit is answered UNKNOWN_MEMBER_ID and skipped. The predicate "
        "is the same on every reachable state",
    "consumer.Consumer.commit_violation:drop-term#2":
        "a late commit whose sender is not live: only a running or paused client keeps a commit in flight (Crash "
        "and LeaveGroup give a fresh client), so not live means epoch 0 after an error answer, whose record was "
        "removed (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH) and is answered UNKNOWN_MEMBER_ID, or answered STALE by a "
        "record it created afresh (assignment epochs newer than the commit's); the predicate is the same on every "
        "reachable state",
    "consumer.Consumer.handle:drop-term#3":
        "read only with kafka_19233 off (the epoch-0 validation before KAFKA-19233), which no variant sets (as "
        "handle:drop-term#4)",
    "consumer.Consumer.handle:off-by-one#2":
        "read only with kafka_19233 off (the epoch-0 validation before KAFKA-19233), which no variant sets (as "
        "handle:off-by-one#3)",
    "consumer.Consumer.apply_answer:drop-term#0":
        "read only when lose_on_fence is off, that is in the broken variant consumer-fenced-keeps-partitions (whose "
        "violation is still found); every correct variant short-circuits before (as apply_answer:drop-term#1)",
    "consumer.Consumer.successors:drop-guard#0":
        "without an in-flight fault flight_successors yields nothing: its two unconditional steps need an answer or a "
        "commit in flight, which only late-answer and late-commit put there, and every other step tests its own "
        "fault; the reachable state graphs (with labels) are identical",
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#3":
        "a running client has an epoch of 0 or more: only Start, EarlyRestart and Resume make a process run (at epoch "
        "0, or keeping the epoch it had running), and every way down gives a fresh client at epoch -1, so "
        "c.proc == UP implies c.epoch >= 0",
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#5":
        "the steps inside test each fault again ('lose-answer' in faults, 'late-answer' in faults), so the conjunct "
        "only saves calling handle (which changes nothing) when neither is selected",
    "consumer_flight.ConsumerFlight.flight_successors:drop-guard#5":
        "only the selection of the lose-answer fault left out: the LoseHeartbeatAnswer step is that fault's, "
        "generated anyway when it is selected, and the checks run with it selected",
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#10":
        "a running client that owns partitions has a member epoch: it gains partitions only from an OK answer, which "
        "sets an epoch above 0, and every error answer or restart that sets epoch 0 also empties them (correct "
        "variants), so c.owned implies c.epoch > 0",
    "consumer_flight.ConsumerFlight.flight_successors:off-by-one#1":
        "a running client that owns partitions has an epoch above 0 (see flight_successors:drop-term#10), so with "
        "c.owned the comparison c.epoch >= 0 is c.epoch > 0",
    "consumer_flight.ConsumerFlight.flight_successors:keep-owned#0":
        "EarlyRestart starts a process that is down, and a down client is a fresh one (every way down gives "
        "ConsumerClient(topics=...)), which owns nothing already: owned=0 changes nothing",
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#17":
        "the EarlyRestart it adds for a static member whose record has left is the join fault's Start step with "
        "another label (a down client is a fresh one: both give the same running client at epoch 0); a fault's step, "
        "generated when that fault is selected, and the checks run with it selected (as successors:drop-term#11)",
    "consumer.Consumer.reconcile:drop-guard#3":
        "without a subscription change in this heartbeat nothing is dropped: a member's assignment is always within "
        "its target, which the assignor computes for the member's topics (_bump recomputes it on every change), and "
        "r.topics changes only in _subscribe (which passes changed) or in the epoch-0 join, where the client owns "
        "nothing (a fresh or reset client), so owned & r.revoking is 0 and this branch is not taken; the reachable "
        "state graphs (with labels) are identical on instances with subscription changes",
    "consumer.Consumer.live_member:off-by-one#0":
        "it also calls a process at epoch 0 live, but such a process owns nothing (it gains partitions only from an OK "
        "answer, which sets an epoch above 0; every error answer or restart that sets epoch 0 empties them), and "
        "Consumer.live_member is read only beside owned partitions (live_ownership; commit_violation for a running "
        "client's own commit); the migration family has its own live_member. Its readers (both safety properties, "
        "the trace export) see the same on every reachable state",
    "consumer.Consumer.live_ownership:drop-term#0":
        "it also yields live members that own nothing, (i, 0): exclusive_ownership meets them with an empty mask "
        "(no clash), commit_violation with o & parts == 0, and the trace export asks only about clients that own "
        "partitions; the same on every reachable state",
    "consumer.Consumer.key:drop-guard#1":
        "which partitions exist then no longer orders the partitions before renaming, but the renaming is still one "
        "within each topic and the existence mask is part of the key (renamed), so the key still merges only states "
        "that are renamings of one another, as before: a sound reduction either way, and a sound reduction keeps the "
        "verdicts of the unreduced search (key:drop-guard#0); the verdicts and even the state counts are unchanged",
    # the KIP-848 family's last eleven (docs/specification.md, "KIP-848 survivors, last eleven")
    "consumer_flight.ConsumerFlight.flight_successors:drop-term#7":
        "an error answer never changes the group where answers can be in flight: UNKNOWN_MEMBER_ID and "
        "UNRELEASED_INSTANCE_ID return the group as it was, and FENCED_MEMBER_EPOCH keeps the member's record in every "
        "variant of the consumer family (fenced_keeps_record; only the migration removes it, and it has no in-flight "
        "faults), so g2 != s.group already implies an OK answer; the labelled reachable graphs are identical",
    "consumer.Consumer.successors:drop-guard#14":
        "the partitions fault's one addition (only the last partition is ever missing) no longer spends the budget: a "
        "change of the bound, not of a rule (Kafka lets a topic grow at any time); with the budget projected away the "
        "mutant's reachable graph at budget b lies between the unchanged model's at b and at b + 1 (the fault's "
        "selection is left out too, which changes nothing: without the fault every partition exists from the start)",
    # issue 30, the classic family's first full run (docs/specification.md, "Classic survivors, the first full run")
    "classic.ClassicProtocol.alive:drop-term#2":
        "a process holding the current member id always has a record (the id is made current only with the record, "
        "by JoinGroup, and every removal of a record, _remove and the dropping of a dynamic member at a join "
        "completion, makes a current id stale), so c.id == CURRENT implies the record it leaves out",
    "classic.ClassicProtocol.successors:drop-term#13":
        "a process holding the current member id always has a record (as for alive:drop-term#2), so c.id == CURRENT "
        "implies r is not None",
    "classic.ClassicProtocol.successors:drop-term#19":
        "_late_expirable(s, i) begins with c.woke, so the conjunct it leaves out is implied",
    "classic.ClassicProtocol._sync:drop-term#1":
        "a process that is down holds no member id: every step that stops one (crash, leave, a fatal "
        "FENCED_INSTANCE_ID, the upgrade's bounce) builds a fresh Client whose id is NONE, so clients[k].id == "
        "CURRENT implies clients[k].proc != DOWN",
    "classic.ClassicProtocol.successors:drop-term#11":
        "only the selection of the late-expiry fault is left out (self.late_expiry is 'late-expiry' in faults): the "
        "flag it sets is read only by that fault's steps (SessionExpired of a resumed member through "
        "_late_expirable, the heartbeat that refreshes the session); with the fault selected the mutant is the "
        "unchanged model, and the checks run with it selected",
    "classic.ClassicProtocol._join:drop-term#2":
        "without static members a process holding a stale id has no record: the record of slot i is created only by "
        "process i's own JoinGroup, which makes its id current, every removal of a record makes a current id stale, "
        "and a dynamic process restarts only once its record is gone; so r is not None implies static_members there",
    "classic.ClassicProtocol._join:drop-term#8":
        "without static members a process with no member id has no record (a reset or a restart of a dynamic member "
        "happens only once its record is gone or goes with it, as for _join:drop-term#2), so r is not None implies "
        "static_members there",
    "classic.ClassicProtocol.successors:timer-early#0":
        "GhostFenced on a process that has no ghost clears a ghost that is not there: the step changes nothing "
        "(t == s), a stutter, and every property reads states and changing steps only",
    "classic.ClassicProtocol._static_replace:drop-term#0":
        "only the selection of the sync-timeout fault is left out (self.sync_timer is 'sync-timeout' in faults, "
        "and no static member where the coordinator assigns): the stale pending-sync id it then records is read only "
        "by that fault's step (the pending-sync timer's forced rebalance); with the fault selected the mutant is the "
        "unchanged model, and the checks run with it selected",
    "classic.ClassicProtocol._static_replace:keep-owned#0":
        "the process it lets keep its partitions owns none: it joins without a member id, so it has no generation "
        "(a restart, a reset and the poll-timeout reset all clear both), and onJoinPrepare cleared what it owned "
        "(lost) before _static_replace; owned=0 there restates it",
    "classic.ClassicProtocol.successors:drop-term#7":
        "NoticeMetadata sets rejoin, so on a process whose rejoin is already set it changes nothing (t == s): a "
        "stutter, which no property reads",
    "classic.ClassicProtocol.successors:drop-term#6":
        "a running member that holds its current id, has no answer on its way and no rejoin pending, in a STABLE "
        "group, is STABLE itself when it is the leader (or a Connect worker): a member left behind by a join phase "
        "(the only one that learns ILLEGAL_GENERATION and stays a member, UNJOINED) is static and never the leader "
        "(the completion elects a member that joined), a dynamic one is dropped; and a member that joined or synced "
        "has an answer on its way until the group is STABLE",
    "classic.ClassicProtocol.successors:drop-term#3":
        "a process with no member id is UNJOINED: a JoinGroup without an id gives it one (current, or pending with "
        "two-step-join, still UNJOINED) in the same step, and every step that takes an id away (the resets after "
        "UNKNOWN_MEMBER_ID and a stale id, the poll-timeout reset, a restart, a crash, a leave) also makes it UNJOINED",
    "classic.ClassicProtocol._join:drop-term#10":
        "a new member's record is created fresh, reporting no topics, while a JoinGroup always carries a non-empty "
        "subscription (a subscription change toggles only the last of two or more topics, a restart keeps or "
        "restores them), so the metadata comparison is already false for a new member",
    "classic.ClassicProtocol.successors:drop-term#0":
        "a process in PREPARING_REBALANCE with no answer on its way never has rejoin set: its JoinGroup clears rejoin "
        "as it moves it there, and every step that sets rejoin (a heartbeat answered REBALANCE_IN_PROGRESS, "
        "NoticeMetadata, a subscription change, a SyncGroup or its answer) needs a STABLE or COMPLETING_REBALANCE "
        "process or an answer it reads; so the JoinGroup it adds is never enabled",
    "classic.ClassicProtocol._join:drop-term#12":
        "it differs only for the leader rejoining a STABLE group with the metadata of its last JoinGroup, which never "
        "happens: the leader is a member that joined the join phase that opened the group's generation (a completion "
        "elects a member that joined, and any other change of leader starts a join phase), reporting the generation "
        "before, and its first JoinGroup in this generation starts the next join phase; so its recorded generation "
        "is below its own and same is false",
    "classic.ClassicProtocol._join:off-by-one#0":
        "no client is ever at generation 0 (the group's first join phase opens generation 1), and a process at "
        "NO_GENERATION that still holds a member id (ILLEGAL_GENERATION, or a pending id after MEMBER_ID_REQUIRED) "
        "already owns nothing, so treating its partitions as lost or revoking them leaves the same state",
    "classic.ClassicProtocol.live_member:drop-term#1":
        "an answer of the group's current generation to a member of an older one is a JoinGroup answer: a SyncGroup "
        "answer carries the generation its member was in when it synced (the member's own, which does not change "
        "while the answer is on its way), an error answer carries none; so the reply check is implied",
    "classic.ClassicProtocol.successors:drop-term#9":
        "the NoticeMetadata it adds is a Connect worker's whose member id is stale (a running process with the "
        "current id has a record): it only sets rejoin, and the worker's next request, a JoinGroup then or a "
        "heartbeat otherwise, is answered UNKNOWN_MEMBER_ID and resets it to the same state either way; with the "
        "rejoin flag of a process that holds no current id left out, the unlabelled reachable graphs and what the "
        "properties read are the unchanged model's",
    # the classic family's first full run, continued (issue 30, helper classic2)
    "classic.ClassicProtocol.successors:drop-term#27":
        "the AddPartition it adds when every partition exists adds none (p is 0): a step that changes nothing but "
        "the perturbation budget; with the budget projected away the reachable states and changing steps are "
        "identical",
    "classic.ClassicProtocol.successors:drop-term#25":
        "the partitions fault's addition no longer needs budget left (at budget 0 it overdraws it by one): a change "
        "of the bound, not of a rule (Kafka lets a topic grow at any time); with the budget projected away the "
        "mutant's reachable graph at budget b lies between the unchanged model's at b and at b + 1 (as "
        "consumer.Consumer.successors:drop-guard#14)",
    "classic.ClassicProtocol._perturbations:drop-guard#2":
        "only the selection of the leave fault is left out (the guard is 'leave' in faults alone): the step is that "
        "fault's, generated anyway when it is selected, and the checks run with it selected (as FAULT_SELECTION)",
    "classic.ClassicProtocol._perturbations:drop-guard#5":
        "it leaves out both conjuncts of the crash step's guard: the crash fault's selection (a choice of the "
        "instance, as FAULT_SELECTION) and c.proc != DOWN, whose step changes nothing but the budget (every way "
        "down builds a fresh down client, which Crash builds again); with crash selected and the budget projected "
        "away the reachable graphs are identical",
    "classic.ClassicProtocol._perturbations:drop-guard#7":
        "_poll_timeout_steps asks self.poll_timeout again before it yields its one step: the guard is implied",
    "classic.ClassicProtocol._receive_sync:drop-guard#1":
        "an eager member owns nothing when its SyncGroup answer arrives (onJoinPrepare revoked everything before its "
        "JoinGroup, or its partitions were lost, and nothing gives it partitions before that answer), so the "
        "cooperative branch revokes nothing, leaves rejoin as it was and sets owned=a as the eager branch does",
    "classic.ClassicProtocol._receive_error:drop-guard#1":
        "no FENCED_INSTANCE_ID answer is ever put in an inbox (only REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID and the "
        "JoinGroup and SyncGroup answers are; a fenced static process is stopped in the step that sends the "
        "request): the branch it stands in front of is never reached",
    "classic.ClassicProtocol._heartbeat:drop-term#0":
        "without static members a process holding a stale id has no record (as _join:drop-term#2): slot i's record "
        "is created only by process i's own JoinGroup, and every removal of a record makes a current id stale; so "
        "r is not None implies the self.static_members it leaves out",
    "classic.ClassicProtocol._heartbeat:keep-rejoin#0":
        "the rejoin flag it keeps is on a process reset to no member id and UNJOINED: its next step is a JoinGroup, "
        "which clears the flag, and nothing else reads it there (the heartbeat, NoticeMetadata and convergence need "
        "a STABLE or COMPLETING_REBALANCE process with the current id); with the rejoin flag of a process that holds "
        "no current id left out the unlabelled reachable graphs and what the properties read are identical",
    "classic.ClassicProtocol._heartbeat:keep-rejoin#1":
        "the rejoin flag it keeps (after ILLEGAL_GENERATION) is on an UNJOINED process: its next step is a JoinGroup, "
        "which clears the flag, and nothing else reads it there (the heartbeat, NoticeMetadata and convergence need "
        "a STABLE or COMPLETING_REBALANCE process); with the rejoin flag of an UNJOINED process left out the "
        "unlabelled reachable graphs and what the properties read are identical",
    "classic.ClassicProtocol._heartbeat:drop-term#3":
        "a COMPLETING_REBALANCE process that can heartbeat (no answer on its way) in a PREPARING_REBALANCE group of "
        "its own generation has rejoin set already: a SyncGroup parked when the group moved got REBALANCE_IN_PROGRESS "
        "(_prepare_rebalance), whose reading sets rejoin, and one sent while PREPARING_REBALANCE sets it too; so the "
        "REBALANCE_IN_PROGRESS branch it widens is never entered by another process (Kafka's client also requests a "
        "rejoin on that answer only when STABLE)",
    "classic.ClassicProtocol._heartbeat:drop-term#4":
        "a STABLE process whose rejoin is already set gains nothing from REBALANCE_IN_PROGRESS: the branch sets "
        "rejoin (set already) and clears woke, which the next branch clears too, or the heartbeat changes nothing: "
        "the mutant adds only a stutter, which no property reads",
    "classic.ClassicProtocol._perturbations:drop-term#8":
        "the Start it adds (a paused static member whose zombie is still around restarted again) reaches the state "
        "GhostFenced (a free step: the old zombie's id was replaced long ago) then Start reaches at the same budget: "
        "the reachable states and what the properties read are identical; it adds only such shortcuts, which spend "
        "the budget (no cycle) and pass the action properties",
    "classic.ClassicProtocol._perturbations:drop-term#13":
        "the ChangeSubscription it adds (a STABLE process whose id went stale) reaches the state the same change "
        "made before the removal reaches at the same budget: it touches only the client's topics and rejoin flag, "
        "which the removal (and the SyncGroup answer a removed member may still read) neither reads nor writes; "
        "the reachable states and what the properties read are identical, and the added steps spend the budget (no "
        "cycle) and pass the action properties",
    # issue 30 (cupgrade): the rolling upgrade's survivors of the classic family's first whole run
    "upgrade.EagerToCooperative._join:drop-guard#0":
        "a process rejoining with the current id and a record lists what it listed when it joined (only a Bounce "
        "changes the list, and it gives the id up), and the members' lists share a protocol pairwise (each new member "
        "was checked against those before it); with the three lists [old], [old, cooperative-sticky], "
        "[cooperative-sticky] pairwise sharing means all share one ([old] and [cooperative-sticky] never meet), so the "
        "check it adds never refuses (Kafka checks an existing member too, counting its own old entry: the same answer)",
    "upgrade.EagerToCooperative._join:drop-term#1":
        "the own record it also counts belongs to an earlier incarnation of the same process, configured with the same "
        "list (a crash and a restart keep it; a Bounce removes the record first): intersecting with it changes nothing, "
        "and where it is the only record the check runs with the process's own, non-empty list",
    "upgrade.EagerToCooperative._join:drop-term#2":
        "with no other member the common protocols are the process's own list, which is never empty",
    "upgrade.EagerToCooperative._receive_join:drop-term#3":
        "in a cooperative-sticky generation a partition added to one member and revoked from another changes owner, and "
        "compute_target withholds exactly those from their new owner (KIP-429), so added & revoked is empty and the "
        "validation never fires (the reason Kafka skips it for cooperative-sticky)",
    "upgrade.EagerToCooperative._receive_join:drop-term#4":
        "a member of a COMPLETING_REBALANCE group took part in its generation's vote (a join or a removal since sends "
        "the group back to PREPARING_REBALANCE) with the list its client still has (only a Bounce changes it, and it "
        "removes the record first), and a COOPERATIVE member lists cooperative-sticky alone, so the vote selected it: "
        "the guard's member_rebalance(c) == 'cooperative' and g.protocol != NEW never hold together for a member, in "
        "any variant where COOPERATIVE needs every listed assignor to support it (and the target is set whenever the "
        "group is COMPLETING_REBALANCE)",
    "upgrade.EagerToCooperative._receive_join:drop-term#6":
        "a member of a COMPLETING_REBALANCE group took part in its generation's vote (a join or a removal since sends "
        "the group back to PREPARING_REBALANCE) with the list its client still has (only a Bounce changes it, and it "
        "removes the record first), and a COOPERATIVE member lists cooperative-sticky alone, so the vote selected it: "
        "the guard's member_rebalance(c) == 'cooperative' and g.protocol != NEW never hold together for a member, in "
        "any variant where COOPERATIVE needs every listed assignor to support it (and a JoinGroup answer is received "
        "only from an inbox)",
    "upgrade.EagerToCooperative._receive_join:drop-term#7":
        "a member of a COMPLETING_REBALANCE group took part in its generation's vote (a join or a removal since sends "
        "the group back to PREPARING_REBALANCE) with the list its client still has (only a Bounce changes it, and it "
        "removes the record first), and a COOPERATIVE member lists cooperative-sticky alone, so the vote selected it: "
        "the guard's member_rebalance(c) == 'cooperative' and g.protocol != NEW never hold together for a member, in "
        "any variant where COOPERATIVE needs every listed assignor to support it (and the leader of a "
        "COMPLETING_REBALANCE group holds that generation's answer: the completion overwrote its inbox)",
    "upgrade.EagerToCooperative._keep_config:drop-guard#1":
        "putting back a client's own list where it did not change yields an equal state (states are values)",
    "upgrade.cooperative_assignor:drop-term#0":
        "every member of a COMPLETING_REBALANCE or STABLE group took part in the last completion's vote (a join or a "
        "removal since sends the group back to PREPARING_REBALANCE; a client's generation is one whose answer it got) "
        "with the list its client still has (only a Bounce changes it, and it starts a fresh client); so a member in "
        "the group's generation that is COOPERATIVE (it lists cooperative-sticky alone) means the vote selected "
        "cooperative- sticky, live or not",
    "upgrade.cooperative_assignor:drop-term#1":
        "every member of a COMPLETING_REBALANCE or STABLE group took part in the last completion's vote (a join or a "
        "removal since sends the group back to PREPARING_REBALANCE; a client's generation is one whose answer it got) "
        "with the list its client still has (only a Bounce changes it, and it starts a fresh client); a live member has "
        "a record (or holds the current generation's answer), so one that is COOPERATIVE means the vote selected "
        "cooperative-sticky, whatever generation it still holds",
    "upgrade.cooperative_assignor:drop-term#2":
        "every member of a COMPLETING_REBALANCE or STABLE group took part in the last completion's vote (a join or a "
        "removal since sends the group back to PREPARING_REBALANCE; a client's generation is one whose answer it got) "
        "with the list its client still has (only a Bounce changes it, and it starts a fresh client); so a live member "
        "in the group's generation that is COOPERATIVE means the vote selected cooperative-sticky, whatever its own "
        "status",
    "upgrade.upgraded:drop-term#1":
        "every member of a COMPLETING_REBALANCE or STABLE group took part in the last completion's vote (a join or a "
        "removal since sends the group back to PREPARING_REBALANCE; a client's generation is one whose answer it got) "
        "with the list its client still has (only a Bounce changes it, and it starts a fresh client); in a converged "
        "group with every consumer a member listing cooperative-sticky alone the vote had no other candidate, so the "
        "group's protocol is cooperative-sticky already",
    # issue 30 (cjoin): the join phase's survivors of the classic family's first full run
    "join_phase.JoinPhase._prepare_rebalance:drop-term#2":
        "a process that is down holds no member id (a crash, a close and a fence each build a fresh down client, and "
        "nothing gives a down process an id), so clients[i].id == CURRENT implies the proc != DOWN it leaves out",
    "join_phase.JoinPhase._complete_join:drop-term#7":
        "a process that is down holds no member id (a crash, a close and a fence each build a fresh down client, and "
        "nothing gives a down process an id), so clients[i].id == CURRENT implies the proc != DOWN it leaves out",
    "join_phase.JoinPhase._remove:drop-term#2":
        "the hold is taken only by the Connect variants, where the coordinator does not assign: their stored "
        "assignments are all empty while COMPLETING_REBALANCE (the join completion clears them, the leader's "
        "SyncGroup stores the new ones and makes the group STABLE), and an EMPTY group has no record to remove, so "
        "r.assignment implies the status it leaves out",
    "join_phase.JoinPhase._remove:drop-guard#1":
        "it clears the woke flag also where it is clear already: the same state",
    "join_phase.JoinPhase._complete_join:drop-guard#6":
        "it clears the woke flag also where it is clear already: the same state",
    "join_phase.JoinPhase.compute_target:drop-guard#0":
        "with nothing held back the metadata's owned masks lose no bit (o & ~0 == o): the same input to the assignor",
    "join_phase.JoinPhase._remove:drop-term#4":
        "a record's JoinGroup is parked (joined) only while the group is PREPARING_REBALANCE: joined is set only in "
        "that state (a JoinGroup in STABLE or COMPLETING_REBALANCE prepares the rebalance first, or is answered at "
        "once), and both ways out of it (the join completion, a new prepare) clear it on every record",
    "join_phase.JoinPhase._complete_join:drop-guard#1":
        "the member it adds to those marked stale is a dynamic one dropped while its process is down (the only way a "
        "dynamic member's process holds no current id): a down process sends nothing, and it starts again as a fresh "
        "process without a member id; with the id of a down process left out the reachable graphs, labelled, and "
        "what the properties read are identical",
    "join_phase.JoinPhase._complete_join:drop-term#4":
        "a dropped Connect worker with nothing assigned is held back for with no work: held stays as it was and only "
        "held_for names it while nothing is held, which nothing reads (the next hold, starting from nothing held, "
        "names its own worker; the timeline reads held_for only while something is held); with held_for left out "
        "while nothing is held the reachable graphs, labelled, and what the properties read are identical",
    "join_phase.JoinPhase._rebalance_timer:drop-term#4":
        "the free rebalance timeout it adds fires when every member has rejoined and only a pending member id "
        "(KIP-394) is outstanding, which holds the completion back: the completion reads no pending id and a pending "
        "id's MEMBER_ID_REQUIRED touches no record, so the state it reaches is the one reached when that process sends "
        "its first JoinGroup after the last member's; the reachable states and what the properties read are "
        "identical, and the steps it adds bump the generation (no cycle) and pass the action properties",
    "join_phase.JoinPhase._rebalance_timer:drop-term#6":
        "the overtaking rebalance timeout it adds fires when every member has rejoined and only a pending member id "
        "(KIP-394) is outstanding (as _rebalance_timer:drop-term#4, spending the budget): with the budget projected "
        "away the reachable states and what the properties read are identical, and the steps it adds bump the "
        "generation (no cycle) and pass the action properties",
    # issue 30, cform: the formation and timer rules (model/formation.py)
    "formation.FormationRules._pending_unknown:drop-guard#0":
        "a process holds Id.PENDING only while its slot's pending bit is set: the bit is dropped only by "
        "PendingExpired, for a process that is not running with that id (a crashed one), or by the holder's own "
        "LeaveGroup, which closes it; so a JoinGroup with a pending id always finds it still pending",
    "formation.FormationRules._pending_unknown:keep-id#0":
        "the branch it changes is never entered: a JoinGroup with a pending id always finds it still pending (as "
        "_pending_unknown:drop-guard#0)",
    "formation.FormationRules._formation_steps:timer-early#1":
        "the guard only saves the loop: each slot's PendingExpired is guarded inside by its own pending bit",
    "formation.FormationRules._formation_steps:drop-term#0":
        "the PendingExpired it adds, for a slot without a pending bit while another slot has one, clears no bit and "
        "cannot complete the join phase (a pending id is still outstanding): it changes nothing, and a stutter is "
        "read by no property (the Kafka walks do not send it: another pending id's session would run out first)",
    "formation.FormationRules._formation_steps:drop-term#2":
        "a slot whose pending bit is set holds Id.PENDING with its process running, or its process is down (a "
        "crashed one holds Id.NONE and cannot start again until the bit is dropped): Id.PENDING implies running",
    "formation.FormationRules._formation_steps:drop-term#3":
        "a running process whose slot's pending bit is set holds Id.PENDING (as _formation_steps:drop-term#2)",
    "formation.FormationRules._formation_steps:drop-term#8":
        "only the selection of the sync-timeout fault is left out (self.sync_timer is 'sync-timeout' in faults for "
        "every variant with a SyncGroup): SyncTimeout is that fault's step (the Kafka timer, KAFKA-12890), generated "
        "anyway when it is selected, and the checks run with it selected (as FAULT_SELECTION)",
    "formation.FormationRules._formation_steps:drop-term#9":
        "SyncTimeout no longer needs budget left (it overdraws it, once per slow member met): a change of the bound, "
        "not of a rule (Kafka's members may be slow any number of times); with the budget projected away the "
        "mutant's graph explored down to one overdraw lies between the unchanged model's at b and at b + 1 (as "
        "successors:drop-term#25); unlike that one the overdraw has no bound, so an exploration with sync-timeout "
        "no longer ends by itself",
    "formation.FormationRules._formation_init:drop-term#3":
        "coordinator-assigns (the pre-0.9 design, no SyncGroup round, no pending-sync timer) is explored without "
        "sync-timeout (applicable_faults), so self.sync_timer is False either way; only a run that forces the "
        "fault on that variant sees the mutant's timer, and no implementation of that design exists to judge it",
    "formation.FormationRules._poll_timeout_steps:drop-term#1":
        "the PollTimeoutLeave it adds for a paused joined process lands where Resume then PollTimeoutLeave lands "
        "(the reset process is a fresh running one either way, and Resume is free): the reachable states and what "
        "the properties read are identical; it adds only such shortcuts, which spend the budget and pass the action "
        "properties",
    "formation.FormationRules._poll_timeout_steps:drop-term#2":
        "a process in COMPLETING_REBALANCE or STABLE holds its current or a stale member id: every reset of its id "
        "(to none or a pending one) also makes it UNJOINED",
    "formation.FormationRules._poll_timeout_leave:drop-term#0":
        "a dynamic process whose id went stale has no record at its slot (a record at a slot is its process's own, "
        "and a new one is made only by its JoinGroup, which gives it the current id)",
    "formation.FormationRules._poll_timeout_leave:drop-term#1":
        "a process holding the current member id has its record (a removal makes its id stale at once)",
    "formation.FormationRules._late_expirable:drop-term#0":
        "its only caller (ClassicProtocol.successors) asks c.woke first, so the conjunct c.woke is implied",
    "formation.FormationRules._late_expirable:drop-term#4":
        "a record is joined only while the group is PREPARING_REBALANCE (a join completion clears joined, a JoinGroup "
        "outside a join phase prepares one or is answered at once without joining), so r.joined implies it",
    # issue 30 (cclassic): classic.py's successors, _heartbeat and _leave
    "classic.ClassicProtocol._leave:drop-term#0":
        "without static members a process whose slot has a record holds the current id (a record is created only "
        "by the process's own JoinGroup, which makes its id current, every removal makes a current id stale, and a "
        "dynamic process restarts or resets only once its record is gone): c.id == CURRENT is implied",
    "classic.ClassicProtocol._leave:drop-term#1":
        "a process holding the current member id always has a record (the id becomes current only together with the "
        "record, and every removal of a record makes a current id stale): records[i] is not None is implied",
    "classic.ClassicProtocol._leave:drop-term#3":
        "a running process whose slot has a pending member id holds it: only its own JoinGroup (MEMBER_ID_REQUIRED) "
        "sets the bit, its LeaveGroup clears it, and a process that crashed holding it starts again only once the "
        "pending id expired; c.id == PENDING is implied",
    "classic.ClassicProtocol._leave:drop-term#4":
        "the coordinator keeps a running process's pending member id until that process joins with it (the bit is "
        "cleared then, and the id becomes current) or goes down (PendingExpired only for a process that cannot come "
        "back): the pending bit is implied by c.id == PENDING",
    "classic.ClassicProtocol._heartbeat:drop-guard#4":
        "the branch it widens clears woke, which is already clear there: the heartbeat it adds changes nothing (a "
        "stutter), and no property reads stutters (the Kafka walks send such heartbeats, answered NONE, the group "
        "unchanged)",
    "classic.ClassicProtocol.successors:drop-term#22":
        "_rebalance_timer yields only when some record has not joined; while the initial delay runs (forming) every "
        "record was created by a JoinGroup of that join phase, so all have joined and it adds no step",
    "classic.ClassicProtocol.successors:drop-term#23":
        "work is held (Group.held) only by _hold, which runs only where self.delayed (connect-delayed and its broken "
        "variant): self.delayed is implied by g.held",
    "classic.ClassicProtocol.successors:drop-term#24":
        "DelayExpired with nothing held sets held to 0 and held_for to -1, as they are already (held_for is set only "
        "together with held): the step it adds is a stutter",
    "classic.ClassicProtocol.successors:drop-guard#10":
        "AddPartition always enabled adds only steps that change nothing but the perturbation budget (nothing left to "
        "add, or the partitions fault not selected), or the partitions fault's addition past the budget (drop-term#27 "
        "and #25 together): a change of the bound, not of a rule; with the budget projected away the reachable graph "
        "is the unchanged model's, or lies between the unchanged model's at budget b and b + 1 (the budget then "
        "falls without end: the campaign's checks run to their state caps, past its 15-minute limit)",
    "classic.ClassicProtocol.converged:drop-term#0":
        "the one non-EMPTY group with no record, pending id or held work and every process down is a forming one "
        "(its last member left while the initial delay ran): the mutant calls it converged one step early, "
        "InitialDelayExpired, a free step enabled there until taken (weakly fair) that empties the group and changes "
        "nothing else, so every run still converges and the convergence verdict is the same in every variant",
    "classic.ClassicProtocol.converged:drop-term#3":
        "a group everyone left but a zombie (the paused old process of a restarted static member) is called "
        "converged one step early: GhostFenced, a free step enabled on every ghost until taken (weakly fair) that "
        "changes nothing else, leads to the state both call converged, so the convergence verdict is the same",
    "classic.ClassicProtocol.converged:drop-term#5":
        "a group everyone left but a pending member id (a process that crashed before its second JoinGroup) is called "
        "converged one step early: PendingExpired, a free step enabled while that process is down (weakly fair) that "
        "changes nothing else, leads to the state both call converged, so the convergence verdict is the same",
    "classic.ClassicProtocol.live_member:drop-term#2":
        "the member it adds as live (a static member left behind, a JoinGroup answer of an older generation unread) "
        "sent that JoinGroup after onJoinPrepare: it owns nothing (eager) or only what its record reports, which "
        "every later assignment gives back to it or withholds from everyone (cooperative), and its commits are "
        "refused (its generation is older); so no overlap and no accepted commit is added and no property verdict "
        "changes (only the trace export's closing fenced and lost lines for it, which the trace checker reads alike)",
    # issue 30, the classic survivors (cprops)
    "properties.convergence:negate-guard#0":
        "the function is read by nothing: the explorers (Python and compiled) decide convergence on the state graph "
        "from the protocol's converged() and never call the EVENTUALLY property's function, so no verdict or bound "
        "changes",
    "properties.ClassicObservations.commit_violation:negate-guard#3":
        "it changes only whom the explanation names (the replaced old process or the member): whether the property "
        "holds is decided by the checks before and after it, and every check reads that verdict, not the wording",
    "properties.ClassicObservations.generation_violation:off-by-one#2":
        "under its guard a.generation != b.generation, b.generation <= a.generation is b.generation < a.generation",
    "properties.ClassicObservations.generation_violation:drop-term#1":
        "it checks also a changed client whose generation did not change: not down, and ahead of the unmoved group "
        "only if an earlier step put it ahead, which that step's check reported (no correct variant has one; on a "
        "broken one the job's verdict and first counterexample are the same)",
    "properties.ClassicObservations.generation_violation:drop-term#9":
        "no classic step moves a group to DEAD (the model has no group deletion or coordinator unload), so "
        "g.status != GS.DEAD holds on every reachable step",
    "properties.ClassicObservations.commit_violation:drop-term#0":
        "a process that is down is always UNJOINED (every step that stops one writes a fresh client), so it adds only "
        "paused processes; a paused committer whose commit would be accepted wrongly is one free Resume (changing only "
        "proc and woke, which the property does not read) from a state the unchanged property flags, so every "
        "instance's verdict is the same (per state it differs there only: the counterexample is one step shorter)",
    "properties.ClassicObservations.commit_violation:drop-term#2":
        "with commits fenced (every correct variant) an accepted commit comes from a live member of the group's "
        "generation, and an empty set of partitions has no stray or shared one, so a member owning nothing is never "
        "reported; only unfenced-commits (broken) differs, at three members (a stale member owning nothing), where "
        "its own zombie's commit violates the property anyway; on its registered jobs every state is judged alike",
}

# One class of equivalent mutants, judged by their one-line diff: a conjunct that only asks whether a fault is
# selected for the explored instance (``'zombie' in faults``) left out. Which perturbations an instance allows
# is a choice of the instance, not a rule of the protocol: with the fault selected the step is generated
# anyway, and every check that could tell runs with it selected.
FAULT_SELECTION = re.compile(r"\(and without '[\w-]+' in (self\.cfg\.|cfg\.|self\.)?faults\)$")


# Functions of model/ that nothing calls (no rule, property, tool or check): a change inside cannot be observed.
# (tests/test_spec_mutants.py checks that each is still called nowhere.)
UNCALLED: dict[str, str] = {
    "consumer_flight.ConsumerFlight.commit_answers":
        "each running client's OffsetCommit answers, now and in flight; the properties call commit_answer directly",
}


def listed_reason(name: str) -> str | None:
    """Why ``name`` is listed as equivalent, by name (``EQUIVALENT``, ``UNCALLED``), or None. Unlike the fault-selection
    rule of :func:`equivalent_reason`, which judges a mutant only once no check killed it, a listed mutant's checks
    need not run again (``groupspec verify --spec-mutants`` without ``--recheck-equivalent``)."""
    if name in EQUIVALENT:
        return EQUIVALENT[name]
    if name.split(":", 1)[0] in UNCALLED:
        return f"the function is called nowhere ({UNCALLED[name.split(':', 1)[0]]})"
    return None


def equivalent_reason(name: str, diff: str) -> str | None:
    """Why the mutant ``name`` cannot be observed, or None."""
    listed = listed_reason(name)
    if listed is not None:
        return listed
    if ":drop-term#" in name and FAULT_SELECTION.search(diff):
        return ("only the selection of a fault for the explored instance is left out: the step is that "
                "fault's, generated anyway when it is selected, and the checks run with it selected")
    return None
