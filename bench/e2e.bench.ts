// npm run bench:e2e [-- --events 2000000 --restore-states 1000000]
// End to end on the local broker, in one run:
//  (a) the raw kafkajs consume rate of a 6-partition topic: the ceiling of the client we use;
//  (b) Sluice's exactly-once rate with one replica running the daily-revenue pipeline over the
//      same topic, until every source and repartition offset is committed; its results are
//      checked against the reference run;
//  (c) the restore time of one replica's state after a kill -9: a window holding N groups.
// The processor runs as the built app (apps/processor/dist), exactly as users run it.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { internalTopics, repartitionTopic, validateDefinition } from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinition } from '@sluice/contracts';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { runReference } from '@sluice/operators';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin } from 'kafkajs';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000000' },
    'restore-states': { type: 'string', default: '1000000' },
    /** Writes a V8 CPU profile of the replica under test to bench/results/. */
    profile: { type: 'boolean', default: false },
  },
});
const N = Number(args.events);
const STATES = Number(args['restore-states']);
const PARTITIONS = 6;
const DAY = 86_400_000;
const MAIN = join(__dirname, '..', 'apps', 'processor', 'dist', 'main.js');
/**
 * Extra V8 flags for the replica (`SLUICE_NODE_FLAGS`), to try tunings; pass the same to this
 * process (`node --… --import tsx bench/e2e.bench.ts`) so the ceiling is measured alike.
 */
const NODE_FLAGS = (process.env['SLUICE_NODE_FLAGS'] ?? '')
  .split(' ')
  .filter((flag) => flag.length > 0);
/** Replica logs and CPU profiles (git-ignored). */
const RESULTS = join(__dirname, 'results');

const log = (message: string) => process.stderr.write(`${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);
const fmt = (n: number) => n.toLocaleString('en-GB');

const kafka = createKafka({ clientId: 'sluice-bench-e2e', logLevel: logLevel.NOTHING });
const prefix = `bench-${randomUUID().slice(0, 8)}`;
const topics = internalTopics(prefix);

function definitionOf(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

async function produce(topic: string, events: EventEnvelope[], label: string): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const chunk = 20_000;
  const started = Date.now();
  let sent = 0;
  let lastReport = 0;
  // One request at a time: concurrent requests may land out of order within a partition, and
  // with no allowed lateness the reordered events would be (rightly) late.
  for (let i = 0; i < events.length; i += chunk) {
    const messages = events
      .slice(i, i + chunk)
      .map((event) => ({ key: event.entity_id ?? null, value: JSON.stringify(event) }));
    await producer.send({ topic, messages, acks: 1 });
    sent += messages.length;
    if (Date.now() - lastReport > 1000) {
      lastReport = Date.now();
      log(`  ${label}: ${fmt(sent)} / ${fmt(events.length)} produced`);
    }
  }
  await producer.disconnect();
  log(
    `  ${label}: ${fmt(events.length)} produced at ${fmt(rate(events.length, Date.now() - started))}/s`,
  );
}

async function ticks(topic: string, time: number): Promise<EventEnvelope[]> {
  const producer = kafka.producer();
  await producer.connect();
  const sent: EventEnvelope[] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const tick = { event_type: 'clock.tick', timestamp: new Date(time).toISOString(), payload: {} };
    sent.push(tick);
    await producer.send({ topic, messages: [{ partition, value: JSON.stringify(tick) }] });
  }
  await producer.disconnect();
  return sent;
}

/**
 * (a) Plain kafkajs: a group reading every record of the topic, doing nothing with it (or, with
 * `parse`, only JSON.parse of each value: the floor of any processor of JSON events).
 */
async function rawConsumeRate(topic: string, expected: number, parse: boolean): Promise<number> {
  const consumer = kafka.consumer({
    groupId: `${prefix}.raw.${parse ? 'parse' : 'plain'}`,
    maxWaitTimeInMs: 100,
  });
  let count = 0;
  let bytes = 0;
  let parsed = 0;
  let first = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      if (first === 0) first = Date.now();
      for (const message of batch.messages) {
        bytes += message.value?.length ?? 0;
        if (parse && message.value)
          parsed += (JSON.parse(message.value.toString()) as object) ? 1 : 0;
      }
      count += batch.messages.length;
      if (count >= expected) done();
    },
  });
  await finished;
  const ms = Date.now() - first;
  await consumer.disconnect();
  log(
    `  raw kafkajs${parse ? ' + JSON.parse' : ''}: ${fmt(count)} records (${fmt(bytes)} value bytes${parse ? `, ${fmt(parsed)} parsed` : ''}) in ${ms} ms`,
  );
  return rate(count, ms);
}

interface Replica {
  child: ChildProcess;
  lines: string[];
  metricsPort: number;
}

let nextPort = 19_600;
function startReplica(id: string, group: string): Replica {
  const metricsPort = nextPort++;
  const profile = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS}`] : [];
  const child = spawn(process.execPath, [...profile, ...NODE_FLAGS, MAIN], {
    env: {
      ...process.env,
      SOURCE_TOPICS: `${prefix}.events`,
      CONSUMER_GROUP: group,
      SLUICE_TOPIC_PREFIX: prefix,
      PROCESSOR_ID: id,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      CONSUMER_SESSION_TIMEOUT_MS: '6000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  mkdirSync(RESULTS, { recursive: true });
  const logFile = createWriteStream(join(RESULTS, `${prefix}.${id}.log`));
  child.stdout!.on('data', (chunk: Buffer) => {
    logFile.write(chunk);
    lines.push(...chunk.toString().split('\n'));
  });
  return { child, lines, metricsPort };
}

async function consumedBy(replica: Replica): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
    const match = /records_consumed_total\{kind="source"\} (\d+)/.exec(text);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Committed offsets of `group` have reached the end of every partition of `topicNames`. */
async function caughtUp(admin: Admin, group: string, topicNames: string[]): Promise<number> {
  let behind = 0;
  for (const topic of topicNames) {
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    for (const end of ends) {
      const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      const position = at === '-1' ? BigInt(end.low) : BigInt(at);
      behind += Number(BigInt(end.high) - position);
    }
  }
  return behind;
}

async function putPipeline(definition: PipelineDefinition): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const stored = { ...definition, version: 1, reset_generation: 0, created_at: '', updated_at: '' };
  await producer.send({
    topic: topics.pipelines,
    messages: [{ key: definition.id, value: JSON.stringify(stored) }],
  });
  await producer.disconnect();
}

/** (b) Sluice end to end, one replica, exactly-once. */
async function sluiceRate(
  admin: Admin,
  definition: PipelineDefinition,
  expected: number,
): Promise<{ rate: number; results: string[] }> {
  const group = `${prefix}.processor`;
  await putPipeline(definition);
  const replica = startReplica('bench-0', group);
  while ((await consumedBy(replica)) === 0) await sleep(20);
  const started = Date.now();
  const watched = [`${prefix}.events`, repartitionTopic(definition.id, prefix)];
  let lastReport = 0;
  for (;;) {
    const behind = await caughtUp(admin, group, watched);
    const consumed = await consumedBy(replica);
    if (Date.now() - lastReport > 1000) {
      lastReport = Date.now();
      log(`  sluice: ${fmt(consumed)} source records consumed, ${fmt(behind)} not committed yet`);
    }
    if (behind === 0 && consumed >= expected) break;
    await sleep(100);
  }
  const ms = Date.now() - started;
  replica.child.kill('SIGTERM');
  await new Promise((resolve) => replica.child.once('exit', resolve));
  const results = await readRecords(definition.output);
  return { rate: rate(expected, ms), results };
}

/** Every committed record of a topic, as `[key, value]` JSON strings sorted (order-free). */
async function readRecords(topic: string): Promise<string[]> {
  const consumer = kafka.consumer({
    groupId: `${prefix}.read.${randomUUID()}`,
    maxWaitTimeInMs: 100,
  });
  const records: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        const value: unknown = message.value ? JSON.parse(message.value.toString()) : null;
        records.push(JSON.stringify([message.key?.toString() ?? null, value]));
      }
    },
  });
  await sleep(3000);
  await consumer.disconnect();
  return records.sort();
}

/** (c) State of STATES groups in one replica, SIGKILLed; a new replica restores it. */
async function restoreTime(admin: Admin): Promise<void> {
  const definition = definitionOf({
    id: randomUUID(),
    name: 'restore probe: one open window per customer',
    source_event_types: ['visit'],
    operators: [
      {
        type: 'window',
        config: { window_type: 'tumbling', size_seconds: 86400 },
        aggregation: { type: 'reduce', field: 'n', function: 'count', group_by: '$.entity_id' },
      },
    ],
    output: `${prefix}.restore-probe`,
  });
  const base = Date.UTC(2026, 11, 1);
  const visits: EventEnvelope[] = Array.from({ length: STATES }, (_, i) => ({
    event_type: 'visit',
    entity_id: `customer-${i}`,
    timestamp: new Date(base + (i % 3_600_000)).toISOString(),
    payload: { n: 1 },
  }));
  // The same installation (group) as (b): its pipelines' state is current, only this one builds.
  const group = `${prefix}.processor`;
  await putPipeline(definition);
  const first = startReplica('restore-0', group);
  await produce(`${prefix}.events`, visits, 'restore probe');
  const watched = [`${prefix}.events`, repartitionTopic(definition.id, prefix)];
  for (;;) {
    const behind = await caughtUp(admin, group, watched);
    log(`  building ${fmt(STATES)} window states: ${fmt(behind)} records not committed yet`);
    if (behind === 0) break;
    await sleep(1000);
  }
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));
  log('  killed the replica (SIGKILL); starting a new one');
  const started = Date.now();
  const second = startReplica('restore-1', group);
  const restored = () =>
    second.lines
      .filter((line) => line.includes('state restored from the changelog'))
      .map(
        (line) =>
          JSON.parse(line) as { state_entries: number; restore_ms: number; pipeline_id: string },
      )
      .filter((entry) => entry.pipeline_id === definition.id);
  while (restored().reduce((sum, e) => sum + e.state_entries, 0) < STATES) {
    if (Date.now() - started > 120_000) throw new Error('restore did not finish in 120 s');
    await sleep(50);
  }
  const wall = Date.now() - started;
  const assignedAt = second.lines
    .filter((line) => line.includes('"partitions assigned"'))
    .map((line) => (JSON.parse(line) as { time: number }).time)
    .pop();
  const lastRestore = Math.max(
    ...second.lines
      .filter((line) => line.includes('state restored from the changelog'))
      .map((line) => (JSON.parse(line) as { time: number }).time),
  );
  const entries = restored();
  const states = entries.reduce((sum, e) => sum + e.state_entries, 0);
  log(
    `  restored ${fmt(states)} states over ${entries.length} partitions; slowest partition ${Math.max(...entries.map((e) => e.restore_ms))} ms`,
  );
  second.child.kill('SIGTERM');
  await new Promise((resolve) => second.child.once('exit', resolve));
  const afterAssignment = assignedAt === undefined ? NaN : lastRestore - assignedAt;
  console.log(
    `restore after kill -9: ${fmt(states)} window states restored ${(afterAssignment / 1000).toFixed(2)} s after the partitions were assigned (target <= 5 s)`,
  );
  console.log(
    `  ${(wall / 1000).toFixed(2)} s from the new process's start, which includes the group noticing the dead replica (session timeout 6 s)`,
  );
}

async function main(): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const source = `${prefix}.events`;
  await ensureTopics(admin, [
    { topic: source, numPartitions: PARTITIONS },
    { topic: topics.pipelines, numPartitions: 1, compacted: true },
  ]);
  log(`prefix ${prefix}; generating ${fmt(N)} orders`);
  const start = Date.UTC(2026, 10, 1);
  const orders = generateOrders({ count: N, start, stepMs: (10 * DAY) / N, seed: 3 });
  await produce(source, orders, 'orders');
  const closing = await ticks(source, start + 12 * DAY);
  const total = N + closing.length;

  log('(a) raw kafkajs consume rate');
  const ceiling = await rawConsumeRate(source, total, false);
  const parseCeiling = await rawConsumeRate(source, total, true);
  log('(b) Sluice, one replica, exactly-once, daily revenue');
  const definition = definitionOf(
    dailyRevenueDefinition({ id: randomUUID(), output: `${prefix}.daily_revenue` }),
  );
  const sluice = await sluiceRate(admin, definition, total);
  const reference = runReference(definition, [...orders, ...closing]);
  console.log(`raw kafkajs consume:              ${fmt(ceiling)} events/s`);
  console.log(`raw kafkajs consume + JSON.parse: ${fmt(parseCeiling)} events/s`);
  console.log(`sluice exactly-once e2e:          ${fmt(sluice.rate)} events/s`);
  console.log(
    `ratio sluice / raw consume:       ${(sluice.rate / ceiling).toFixed(2)} (target >= 0.80)`,
  );
  console.log(`ratio sluice / consume + parse:   ${(sluice.rate / parseCeiling).toFixed(2)}`);
  const expected = reference.results.map((r) => JSON.stringify([r.key, r.value])).sort();
  const same = JSON.stringify(expected) === JSON.stringify(sluice.results);
  console.log(
    `results: ${sluice.results.length} published, ${expected.length} in the reference run: ${same ? 'identical' : 'DIFFERENT'}`,
  );
  if (!same) process.exitCode = 1;
  if (STATES > 0) {
    log('(c) restore time');
    await restoreTime(admin);
  }
  await admin.disconnect();
}

main().catch((error: Error) => {
  log(error.stack ?? error.message);
  process.exit(1);
});
