// npm run bench:join [-- --events 2000000 --keys 100000 --rows 1000000 --e2e true --peer true
//                      --only interval|table --profile --baseline <checkout>/apps/processor/dist/main.js]
// The two joins of issue 17, in one run:
//  (a) in process: the interval join (orders ⋈ payments within an hour, 2 × events, `keys`
//      join keys) and the temporal table join (events orders ⋈ `rows` customer rows), run by
//      the reference (runGraphReference, the code the processor's tasks run), beside a plain
//      hash join over the same records in the same run: the floor of what any join costs;
//  (b) end to end on the local broker, one replica, exactly-once: each join from the first
//      record consumed until every source and repartition offset is committed; the output is
//      checked against the reference run, record for record;
//  (c) the restore of the table join's state (a version per customer) after a kill -9.
//  (d) the Kafka Streams 4.4.0 peer of each join (bench/peers/kafka-streams, Joins.java), one
//      instance, one stream thread, exactly_once_v2, over the same topics: its rate beside
//      Sluice's, and its results compared with Sluice's.
// The processor runs as the built app (apps/processor/dist), as users run it.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import { canonicalJson, internalTopics, repartitionTopic } from '@sluice/contracts';
import type { EventEnvelope, GraphDefinitionInput } from '@sluice/contracts';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { planOfGraph, runGraphReference } from '@sluice/operators';
import type { SourcedEvent } from '@sluice/operators';
import { seededRandom } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';
import { logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';

import {
  consumedBy,
  DAY,
  deleteRunTopics,
  fmt,
  graphOf,
  log,
  notCommitted,
  PARTITIONS,
  produce,
  produceTicks,
  putPipeline,
  rate,
  readRecords,
  startReplica,
  brokerCpuSeconds,
  stopProcess,
  usageOf,
} from './support/kafka-bench';
import type { Replica } from './support/kafka-bench';
import { buildPeer, startPeer, untilCommitted } from './support/kafka-streams-peer';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000000' },
    keys: { type: 'string', default: '100000' },
    rows: { type: 'string', default: '1000000' },
    e2e: { type: 'string', default: 'true' },
    /** Writes a V8 CPU profile of each replica under test to bench/results/. */
    profile: { type: 'boolean', default: false },
    /** (d) Kafka Streams' peers of both joins over the same topics. */
    peer: { type: 'string', default: 'true' },
    /** Only this join: interval or table. */
    only: { type: 'string' },
    /**
     * Another build of the processor (a checkout's apps/processor/dist/main.js), run end to end
     * over the same topics after this one: the same run's rate to compare with.
     */
    baseline: { type: 'string' },
  },
});
const N = Number(args.events);
const KEYS = Number(args.keys);
const ROWS = Number(args.rows);
const START = Date.UTC(2026, 10, 1);
const SPAN = 10 * DAY;
const HOUR = 3_600_000;

const kafka = createKafka({ clientId: 'sluice-bench-join', logLevel: logLevel.NOTHING });
const prefix = `join-${randomUUID().slice(0, 8)}`;
const topics = internalTopics(prefix);

/** `count` events over ten days in time order, each naming one of `keys` keys at `field`. */
function stream(
  count: number,
  type: string,
  field: string,
  keys: number,
  seed: number,
): EventEnvelope[] {
  const random = seededRandom(seed);
  const step = SPAN / count;
  let time = START;
  return Array.from({ length: count }, (_, i) => {
    time += Math.floor(random() * 2 * step);
    const key = `k${Math.floor(random() * keys)}`;
    return {
      event_type: type,
      entity_id: `${type}-${i}`,
      timestamp: new Date(time).toISOString(),
      payload: { [field]: key, amount: Math.round(random() * 10_000) / 100 },
    };
  });
}

/** Every customer's row, a day before the orders. */
function customerRows(): EventEnvelope[] {
  const tiers = ['bronze', 'silver', 'gold'];
  return Array.from({ length: ROWS }, (_, i) => ({
    event_type: 'customer.updated',
    entity_id: `customer-${i}`,
    timestamp: new Date(START - DAY).toISOString(),
    payload: { customer: `k${i}`, tier: tiers[i % 3] },
  }));
}

function intervalGraph(id: string, orders: string, payments: string): GraphDefinitionInput {
  return {
    id,
    name: 'bench: orders ⋈ payments within an hour',
    sources: [
      { id: 'orders', topic: orders, event_types: ['order.placed'], start: 'earliest' },
      { id: 'payments', topic: payments, event_types: ['payment.captured'], start: 'earliest' },
    ],
    transforms: [
      {
        id: 'paid',
        type: 'join',
        inputs: ['orders', 'payments'],
        on: 'key',
        within_seconds: 3600,
        select: { order: 'left.amount', paid: 'right.amount' },
      },
    ],
    sinks: [{ id: 'out', input: 'paid', topic: `${prefix}.orders_paid` }],
  };
}

function tableGraph(id: string, orders: string, customers: string): GraphDefinitionInput {
  return {
    id,
    name: 'bench: orders ⋈ customers',
    sources: [
      { id: 'orders', topic: orders, event_types: ['order.placed'], start: 'earliest' },
      {
        id: 'customers',
        topic: customers,
        as: 'table',
        key: 'customer',
        event_types: ['customer.updated'],
      },
    ],
    transforms: [
      {
        id: 'tiered',
        type: 'join',
        inputs: ['orders', 'customers'],
        on: 'key',
        on_missing: 'emit',
        select: { amount: 'left.amount', tier: 'right.tier' },
      },
    ],
    sinks: [{ id: 'out', input: 'tiered', topic: `${prefix}.orders_tiered` }],
  };
}

/** Two time-ordered inputs merged by time, each tagged with its source. */
function merged(a: SourcedEvent[], b: SourcedEvent[]): SourcedEvent[] {
  const out: SourcedEvent[] = [];
  const time = (item: SourcedEvent) => Date.parse(String((item.event as EventEnvelope).timestamp));
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length)
    out.push(j >= b.length || (i < a.length && time(a[i]!) <= time(b[j]!)) ? a[i++]! : b[j++]!);
  return out;
}

const sourced = (source: string, events: EventEnvelope[]): SourcedEvent[] =>
  events.map((event) => ({ source, event }));

/** The floor: a hash join of the same records with nothing but the key and the time checked. */
function hashInterval(orders: EventEnvelope[], payments: EventEnvelope[]): number {
  const byKey = new Map<string, number[]>();
  for (const payment of payments) {
    const key = payment.payload['key'] as string;
    const list = byKey.get(key) ?? [];
    list.push(Date.parse(String(payment.timestamp)));
    byKey.set(key, list);
  }
  let pairs = 0;
  for (const order of orders) {
    const time = Date.parse(String(order.timestamp));
    for (const paid of byKey.get(order.payload['key'] as string) ?? [])
      if (Math.abs(paid - time) <= HOUR) pairs += 1;
  }
  return pairs;
}

function hashTable(orders: EventEnvelope[], rows: EventEnvelope[]): number {
  const table = new Map<string, unknown>();
  for (const row of rows) table.set(row.payload['customer'] as string, row.payload['tier']);
  let found = 0;
  for (const order of orders) if (table.has(order.payload['key'] as string)) found += 1;
  return found;
}

/** Runs `work` once, timed: events per second over `count` events. */
function timed<T>(count: number, work: () => T): { rate: number; value: T } {
  const started = process.hrtime.bigint();
  const value = work();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { rate: rate(count, ms), value };
}

interface Case {
  name: string;
  graph: GraphDefinitionInput & { id: string };
  left: EventEnvelope[];
  right: EventEnvelope[];
  rightTopic: string;
  expected: string[];
}

/**
 * (d) Kafka Streams' join over the same topics, from its first record until its group has
 * committed every source and repartition record.
 */
async function peerRun(
  admin: Admin,
  test: Case,
): Promise<{ rate: number; results: string[]; cpuPerMillion: number; brokerPerMillion: number }> {
  const applicationId = `${prefix}.${test.name}.kafka-streams`;
  const output = `${prefix}.${test.name}.kafka-streams.out`;
  await ensureTopics(admin, [{ topic: output, numPartitions: PARTITIONS }]);
  const sources = test.graph.sources.map((source) => source.topic);
  const peer = startPeer('Joins', {
    JOIN: test.name,
    LEFT_TOPIC: sources[0]!,
    RIGHT_TOPIC: sources[1]!,
    OUTPUT_TOPIC: output,
    APPLICATION_ID: applicationId,
    PIPELINE_ID: test.graph.id,
    // Kafka Streams' stream time is the largest timestamp its join task has seen, and one
    // input's repartition can run far ahead of the other's (a small run read all payments
    // first and dropped most orders as expired with a day's grace): the grace covers the whole
    // input. The table join buffers none (its rows all come first): orders join as they come.
    GRACE_MS: test.name === 'interval' ? String(SPAN + 2 * DAY) : '0',
  });
  try {
    while (peer.firstRecordAt() === 0) {
      if (peer.child.exitCode !== null) throw new Error(`the peer exited (${peer.child.exitCode})`);
      await sleep(20);
    }
    const brokerBefore = brokerCpuSeconds();
    // Both inputs are re-keyed, so two repartition topics; until Kafka Streams has made both,
    // a name that is not there counts as a record not committed (not as done).
    const internal = async () => {
      const made = (await admin.listTopics()).filter(
        (topic) => topic.startsWith(applicationId) && topic.endsWith('-repartition'),
      );
      return made.length >= 2 ? made : [...made, `${applicationId}-not-made-yet-repartition`];
    };
    const done = await untilCommitted(
      admin,
      `kafka streams ${test.name}`,
      applicationId,
      async () => [...sources, ...(await internal())],
    );
    const count = test.left.length + test.right.length;
    // From the JVM's start, as the replica's CPU counts from its own.
    const cpuPerMillion = perMillion(usageOf(peer.child.pid!).cpuSeconds, count);
    const brokerPerMillion = perMillion(brokerCpuSeconds() - brokerBefore, count);
    return {
      rate: rate(count, done - peer.firstRecordAt()),
      results: await readRecords(kafka, output, test.expected.length),
      cpuPerMillion,
      brokerPerMillion,
    };
  } finally {
    await stopProcess(peer.child);
  }
}

/** CPU seconds per million of `count` events. */
const perMillion = (seconds: number, count: number) => (seconds * 1e6) / count;

/** A processor group per join: the restore of one does not wait on the other's changelog. */
const groupOf = (test: Case) => `${prefix}.${test.name}.processor`;

/**
 * Where a baseline build runs the same join: a pipeline id (so internal topics), a group and a
 * sink of its own.
 */
interface Build {
  main: string;
  id: string;
  group: string;
  sink: string;
}

/** (b) One replica over the pre-produced topics until everything is committed. */
async function endToEnd(
  admin: Admin,
  test: Case,
  build?: Build,
): Promise<{ rate: number; replica: Replica; cpuPerMillion: number; brokerPerMillion: number }> {
  const group = build?.group ?? groupOf(test);
  const graph = build
    ? {
        ...test.graph,
        id: build.id,
        sinks: test.graph.sinks.map((sink) => ({ ...sink, topic: build.sink })),
      }
    : test.graph;
  await putPipeline(kafka, topics.pipelines, graphOf(graph), group);
  const replica = startReplica({
    id: `${test.name}-${build ? 'baseline' : '0'}`,
    prefix,
    group,
    source: test.graph.sources.map((source) => source.topic).join(','),
    profile: args.profile,
    ...(build ? { main: build.main } : {}),
  });
  while ((await consumedBy(replica)) === 0) {
    if (replica.child.exitCode !== null) throw new Error('the replica exited');
    await sleep(20);
  }
  const started = Date.now();
  const brokerBefore = brokerCpuSeconds();
  const watched = [
    ...test.graph.sources.map((source) => source.topic),
    repartitionTopic(graph.id, prefix),
  ];
  let lastReport = 0;
  for (;;) {
    const behind = await notCommitted(admin, group, watched);
    if (behind === 0) break;
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      log(`  ${test.name}: ${fmt(behind)} records not committed yet`);
    }
    await sleep(200);
  }
  const count = test.left.length + test.right.length;
  // CPU per event moves less than the rate with what else this machine runs.
  const cpuPerMillion = perMillion(usageOf(replica.child.pid!).cpuSeconds, count);
  const brokerPerMillion = perMillion(brokerCpuSeconds() - brokerBefore, count);
  return { rate: rate(count, Date.now() - started), replica, cpuPerMillion, brokerPerMillion };
}

/**
 * (c) The table join's replica SIGKILLed; a new one restores the table. Under --profile it is
 * stopped with SIGTERM instead, since a killed process writes no profile; the new replica
 * restores the same changelog either way (state is held in memory only).
 */
async function restoreTime(test: Case, killed: Replica): Promise<string> {
  const signal = args.profile ? 'SIGTERM' : 'SIGKILL';
  await stopProcess(killed.child, signal);
  const started = Date.now();
  const second = startReplica({
    id: `${test.name}-restore`,
    prefix,
    group: groupOf(test),
    source: test.graph.sources.map((source) => source.topic).join(','),
    profile: args.profile,
  });
  try {
    const restored = () =>
      second.lines
        .filter((line) => line.includes('state restored from the changelog'))
        .map((line) => JSON.parse(line) as { state_entries: number; time: number });
    while (restored().reduce((sum, e) => sum + e.state_entries, 0) < ROWS) {
      if (second.child.exitCode !== null) throw new Error('the restoring replica exited');
      if (Date.now() - started > 180_000) throw new Error('the restore did not finish in 180 s');
      await sleep(50);
    }
    const assignedAt = second.lines
      .filter((line) => line.includes('"partitions assigned"'))
      .map((line) => (JSON.parse(line) as { time: number }).time)
      .pop();
    const last = Math.max(...restored().map((entry) => entry.time));
    const seconds = assignedAt === undefined ? NaN : (last - assignedAt) / 1000;
    return `restore after ${signal === 'SIGKILL' ? 'kill -9' : 'SIGTERM'}: ${fmt(ROWS)} table rows restored ${seconds.toFixed(2)} s after the partitions were assigned (target <= 5 s)`;
  } finally {
    await stopProcess(second.child);
  }
}

async function main(): Promise<void> {
  log(`generating ${fmt(N)} orders, ${fmt(N)} payments over ${fmt(KEYS)} keys, ${fmt(ROWS)} rows`);
  const wants = (name: string) => args.only === undefined || args.only === name;
  const orders = wants('interval') ? stream(N, 'order.placed', 'key', KEYS, 1) : [];
  const payments = wants('interval') ? stream(N, 'payment.captured', 'key', KEYS, 2) : [];
  const tableOrders = wants('table') ? stream(N, 'order.placed', 'key', ROWS, 3) : [];
  const rows = wants('table') ? customerRows() : [];
  const ordersTopic = `${prefix}.orders`;
  const paymentsTopic = `${prefix}.payments`;
  const tableOrdersTopic = `${prefix}.orders-t`;
  const customersTopic = `${prefix}.customers`;
  const all: Case[] = [
    {
      name: 'interval',
      graph: { ...intervalGraph(randomUUID(), ordersTopic, paymentsTopic) } as Case['graph'],
      left: orders,
      right: payments,
      rightTopic: paymentsTopic,
      expected: [],
    },
    {
      name: 'table',
      graph: { ...tableGraph(randomUUID(), tableOrdersTopic, customersTopic) } as Case['graph'],
      left: tableOrders,
      right: rows,
      rightTopic: customersTopic,
      expected: [],
    },
  ];
  const cases = all.filter((test) => wants(test.name));

  log('(a) in process');
  const lines: string[] = [];
  const floorInterval = timed(2 * N, () => hashInterval(orders, payments));
  const floorTable = timed(N + ROWS, () => hashTable(tableOrders, rows));
  for (const test of cases) {
    const input = merged(
      sourced(test.graph.sources[1]!.id, test.right),
      sourced('orders', test.left),
    );
    const run = timed(input.length, () =>
      runGraphReference(planOfGraph(graphOf(test.graph)), input),
    );
    test.expected = run.value.sinks['out']!.results.map((r) =>
      canonicalJson([r.key, r.value]),
    ).sort();
    const floor = test.name === 'interval' ? floorInterval : floorTable;
    lines.push(
      `${test.name} join in process: ${fmt(run.rate).padStart(10)} events/s, ${fmt(test.expected.length)} results; ` +
        `hash join floor ${fmt(floor.rate)} events/s (${fmt(floor.value)} matches), ratio ${(run.rate / floor.rate).toFixed(2)}`,
    );
    log(`  ${lines.at(-1)}`);
  }

  if (args.e2e === 'true') {
    if (args.peer === 'true') buildPeer();
    log('(b) end to end: producing');
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic: topics.pipelines, numPartitions: 1, compacted: true },
      ...[ordersTopic, paymentsTopic, tableOrdersTopic].map((topic) => ({
        topic,
        numPartitions: PARTITIONS,
      })),
      { topic: customersTopic, numPartitions: PARTITIONS, compacted: true },
    ]);
    for (const test of cases) {
      await produce(
        kafka,
        test.rightTopic,
        test.right,
        `${test.name}: ${test.graph.sources[1]!.id}`,
      );
      await produce(kafka, test.graph.sources[0]!.topic, test.left, `${test.name}: orders`);
      // End of input on every partition of both: the join's watermark passes everything.
      const end = START + SPAN + 2 * DAY;
      await produceTicks(kafka, test.rightTopic, end);
      await produceTicks(kafka, test.graph.sources[0]!.topic, end);
    }
    for (const test of cases) {
      log(`(b) ${test.name} join, one replica`);
      const {
        rate: e2eRate,
        replica,
        cpuPerMillion,
        brokerPerMillion,
      } = await endToEnd(admin, test);
      const sink = test.graph.sinks[0]!.topic;
      const published = await readRecords(kafka, sink, test.expected.length);
      const same = JSON.stringify(published) === JSON.stringify(test.expected);
      lines.push(
        `${test.name} join end to end: ${fmt(e2eRate).padStart(10)} events/s (exactly-once, one replica); ` +
          `${fmt(published.length)} results, = reference: ${same ? 'yes' : 'NO'}; ` +
          `CPU per million events: replica ${cpuPerMillion.toFixed(2)} s, broker ${brokerPerMillion.toFixed(2)} s`,
      );
      log(`  ${lines.at(-1)}`);
      if (!same) process.exitCode = 1;
      if (test.name === 'table') {
        log('(c) restore of the table');
        lines.push(await restoreTime(test, replica));
      } else await stopProcess(replica.child);
      if (args.baseline !== undefined) {
        log(`(b) again, the baseline build: ${args.baseline}`);
        const build = {
          main: args.baseline,
          id: randomUUID(),
          group: `${groupOf(test)}.baseline`,
          sink: `${sink}.baseline`,
        };
        const baseline = await endToEnd(admin, test, build);
        await stopProcess(baseline.replica.child);
        // Its results name its own pipeline id.
        const theirs = (await readRecords(kafka, build.sink, test.expected.length))
          .map((record) => record.replaceAll(build.id, test.graph.id))
          .sort();
        const equal = JSON.stringify(theirs) === JSON.stringify(test.expected);
        lines.push(
          `${test.name} join end to end, baseline: ${fmt(baseline.rate).padStart(10)} events/s; ` +
            `this / baseline ${(e2eRate / baseline.rate).toFixed(2)}; = reference: ${equal ? 'yes' : 'NO'}; ` +
            `CPU per million events: replica ${baseline.cpuPerMillion.toFixed(2)} s ` +
            `(this / baseline ${(cpuPerMillion / baseline.cpuPerMillion).toFixed(2)}), ` +
            `broker ${baseline.brokerPerMillion.toFixed(2)} s`,
        );
        log(`  ${lines.at(-1)}`);
        if (!equal) process.exitCode = 1;
      }
      if (args.peer !== 'true') continue;
      log(`(d) kafka streams, ${test.name} join, one instance, one stream thread`);
      const peer = await peerRun(admin, test);
      const agrees = JSON.stringify(peer.results) === JSON.stringify(published);
      lines.push(
        `${test.name} join, kafka streams 4.4.0 (exactly_once_v2): ${fmt(peer.rate)} events/s; ` +
          `ratio sluice / kafka streams ${(e2eRate / peer.rate).toFixed(2)} (target >= 1.5); ` +
          `${fmt(peer.results.length)} results, = sluice: ${agrees ? 'yes' : 'NO'}; ` +
          `CPU per million events: kafka streams ${peer.cpuPerMillion.toFixed(2)} s, broker ${peer.brokerPerMillion.toFixed(2)} s`,
      );
      log(`  ${lines.at(-1)}`);
    }
    await deleteRunTopics(admin, prefix);
    await admin.disconnect();
  }
  console.log(`\njoin benchmark: node ${process.version}`);
  for (const line of lines) console.log(line);
}

main().catch((error: Error) => {
  log(error.stack ?? error.message);
  process.exit(1);
});
