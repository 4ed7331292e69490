// One kafkajs consumer in its own OS process, recording what it observes as trace lines.
// Run by the harness: node kafkajs_worker.js SPEC_JSON (the same spec as worker.py; NODE_PATH must
// reach the kafkajs package, which `make kafkajs` installs into .node/).
//
// kafkajs has no rebalance listener: it is an eager client that stops fetching everything when a
// rebalance starts and is told its whole new assignment when it rejoins. So its instrumentation
// events are read as the listener calls they stand for: consumer.rebalancing -> `revoked` of
// everything it owned; consumer.group_join -> `assigned` (eager: the whole new assignment, with the
// generation and member id); consumer.crash -> `error`. Commands on stdin: `leave`, `pause SECONDS`,
// `subscribe T1,T2`: kafkajs cannot change the subscription of a running consumer ("Cannot subscribe to
// topic while consumer is running"), so the worker stops it (kafkajs's stop() sends LeaveGroup), records
// `revoked` of everything it owned, subscribes and runs it again (it rejoins as a new member).
"use strict";
const fs = require("fs");
const readline = require("readline");
const { Kafka, logLevel } = require("kafkajs");

const spec = JSON.parse(process.argv[2]);
const out = fs.openSync(spec.out, "a");
let owned = [];
let memberId = null;
let generation = null;

function now() { return Math.floor(Date.now() - spec.origin_ms); }
function write(event, fields) {
  const line = Object.assign({ ts_ms: now(), group: spec.group, member: spec.member, event }, fields || {});
  line.protocol = "eager";
  if (generation !== null && line.generation === undefined) line.generation = generation;
  if (memberId) line.member_id = memberId;
  fs.writeSync(out, JSON.stringify(line) + "\n");
}

async function main() {
  const kafka = new Kafka({ clientId: spec.member, brokers: [spec.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: spec.group, sessionTimeout: spec.session_timeout_ms, heartbeatInterval: spec.heartbeat_interval_ms,
    rebalanceTimeout: spec.max_poll_interval_ms,
  });
  consumer.on(consumer.events.REBALANCING, () => {
    write("revoked", { partitions: owned });
    owned = [];
  });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    memberId = e.payload.memberId;
    generation = e.payload.generationId;
    const parts = [];
    for (const [topic, ps] of Object.entries(e.payload.memberAssignment || {})) for (const p of ps) parts.push([topic, p]);
    parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    if (owned.length) write("revoked", { partitions: owned });
    owned = parts;
    write("assigned", { partitions: parts });
  });
  consumer.on(consumer.events.CRASH, (e) => write("error", { error: String(e.payload.error && e.payload.error.type || e.payload.error) }));
  let paused = 0;
  const runIt = () => consumer.run({
    eachMessage: async () => {
      while (Date.now() < paused) await new Promise((r) => setTimeout(r, 100));
    },
  });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", async (line) => {
    line = line.trim();
    if (line === "leave") {
      await consumer.disconnect();
      write("left");
      process.exit(0);
    } else if (line.startsWith("pause ")) {
      paused = Date.now() + 1000 * parseFloat(line.split(" ")[1]);
    } else if (line.startsWith("subscribe ")) {
      await consumer.stop();
      write("revoked", { partitions: owned });
      owned = [];
      await consumer.subscribe({ topics: line.split(" ")[1].split(","), fromBeginning: true });
      await runIt();
    }
  });
  write("joined");
  await consumer.connect();
  await consumer.subscribe({ topics: spec.topics, fromBeginning: true });
  await runIt();
}

main().catch((e) => { write("error", { error: String(e && e.message || e).slice(0, 300) }); process.exit(3); });
