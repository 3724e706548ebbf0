// What the end-to-end benchmarks share: producing the input, running the built processor as a
// replica, knowing when a consumer group has committed everything, and reading a topic back.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { canonicalJson, validateDefinition, validateGraphDefinition } from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinition, PipelineGraph } from '@sluice/contracts';
import { ensureTopics } from '@sluice/kafka';
import { generateOrders } from '@sluice/operators/testing';
import { sleep, withoutEpoch } from '@sluice/testing';
import { Partitioners } from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';

export const PARTITIONS = 6;
export const DAY = 86_400_000;
/** Replica logs and CPU profiles (git-ignored). */
export const RESULTS = join(__dirname, '..', 'results');
const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'apps', 'processor', 'dist', 'main.js');

export const log = (message: string) => process.stderr.write(`${message}\n`);
export const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);
export const fmt = (n: number) => n.toLocaleString('en-GB');

export function definitionOf(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

export function graphOf(input: unknown): PipelineGraph {
  const result = validateGraphDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.graph;
}

export async function produce(
  kafka: Kafka,
  topic: string,
  events: EventEnvelope[],
  label: string,
): Promise<void> {
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

/**
 * A fresh 6-partition source and pipelines topic, and `count` orders over ten days produced to
 * the source keyed by entity (the input of the daily-revenue benchmarks).
 */
export async function produceOrders(
  kafka: Kafka,
  topics: { source: string; pipelines: string },
  count: number,
  seed: number,
): Promise<{ orders: EventEnvelope[]; start: number }> {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [
    { topic: topics.source, numPartitions: PARTITIONS },
    { topic: topics.pipelines, numPartitions: 1, compacted: true },
  ]);
  await admin.disconnect();
  log(`generating ${fmt(count)} orders`);
  const start = Date.UTC(2026, 10, 1);
  const orders = generateOrders({ count, start, stepMs: (10 * DAY) / count, seed });
  await produce(kafka, topics.source, orders, 'orders');
  return { orders, start };
}

/** One event per partition at `time` (no pipeline matches its type): the end of the input. */
export async function produceTicks(
  kafka: Kafka,
  topic: string,
  time: number,
): Promise<EventEnvelope[]> {
  const producer = kafka.producer();
  await producer.connect();
  const sent: EventEnvelope[] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const tick = { event_type: 'clock.tick', timestamp: new Date(time).toISOString(), payload: {} };
    sent.push(tick);
    // Keyed, so that a compacted topic (a table's) takes it too.
    await producer.send({
      topic,
      messages: [{ partition, key: `clock.tick.${partition}`, value: JSON.stringify(tick) }],
    });
  }
  await producer.disconnect();
  return sent;
}

/**
 * Records of `topics` the group has not committed yet (a topic that does not exist yet counts
 * as one record behind): 0 once every partition's committed offset is at its end.
 */
export async function notCommitted(admin: Admin, group: string, topics: string[]) {
  let behind = 0;
  for (const topic of topics) {
    let ends: Awaited<ReturnType<Admin['fetchTopicOffsets']>>;
    try {
      ends = await admin.fetchTopicOffsets(topic);
    } catch {
      behind += 1;
      continue;
    }
    behind += await notCommittedOf(admin, group, topic, ends);
  }
  return behind;
}

/**
 * Records of `topic` the group has not committed yet, against `ends` read before: alone, one
 * OffsetFetch a call for a topic whose ends do not move (a source produced in full before the
 * run), where notCommitted reads the ends again every time.
 */
export async function notCommittedOf(
  admin: Admin,
  group: string,
  topic: string,
  ends: Awaited<ReturnType<Admin['fetchTopicOffsets']>>,
): Promise<number> {
  const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  let behind = 0;
  for (const end of ends) {
    const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
    behind += Number(BigInt(end.high) - (at === '-1' ? BigInt(end.low) : BigInt(at)));
  }
  return behind;
}

export async function putPipeline(
  kafka: Kafka,
  pipelinesTopic: string,
  definition: PipelineDefinition | PipelineGraph,
  /** The CONSUMER_GROUP of the replicas that are to run it. */
  processorGroup: string,
): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const stored = {
    ...definition,
    processor_group: processorGroup,
    version: 1,
    reset_generation: 0,
    created_at: '',
    updated_at: '',
  };
  await producer.send({
    topic: pipelinesTopic,
    messages: [{ key: definition.id, value: JSON.stringify(stored) }],
  });
  await producer.disconnect();
}

/**
 * Every committed record of a topic as `[key, value]` canonical JSON (sorted keys), sorted:
 * two systems' outputs compare equal whatever their field order or number formatting. With
 * `expected`, it reads until that many have come (at most two minutes), then 2 s more.
 */
export async function readRecords(kafka: Kafka, topic: string, expected = 0): Promise<string[]> {
  const consumer = kafka.consumer({
    groupId: `bench.read.${randomUUID()}`,
    maxWaitTimeInMs: 100,
  });
  const records: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        // The epoch a value carries is not the reference run's to compare.
        const { value } = withoutEpoch(message.value ? JSON.parse(message.value.toString()) : null);
        records.push(canonicalJson([message.key?.toString() ?? null, value]));
      }
    },
  });
  const started = Date.now();
  while (records.length < expected && Date.now() - started < 120_000) await sleep(200);
  await sleep(expected > 0 ? 2000 : 3000);
  await consumer.disconnect();
  return records.sort();
}

export interface Replica {
  child: ChildProcess;
  lines: string[];
  metricsPort: number;
}

let nextPort = 19_600;

/**
 * V8 flags the processor image runs with (NODE_OPTIONS in docker/Dockerfile): the benches run
 * replicas, and the plain kafkajs consumers they are compared with, the same way.
 */
export const PROCESSOR_NODE_FLAGS = ['--max-semi-space-size=64'];

/**
 * The built processor (apps/processor/dist) as users run it (PROCESSOR_NODE_FLAGS). `nodeFlags`
 * are extra V8 flags (to try tunings); `profile` writes a CPU profile to bench/results/.
 */
export function startReplica(options: {
  id: string;
  prefix: string;
  group: string;
  nodeFlags?: string[];
  profile?: boolean;
  /** Another build of the processor (a baseline checkout's apps/processor/dist/main.js). */
  main?: string;
  /** The source topic, when not `<prefix>.events`. */
  source?: string;
  env?: Record<string, string>;
}): Replica {
  const metricsPort = nextPort++;
  const profile = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS}`] : [];
  // SLUICE_REPLICA_NODE_FLAGS (space-separated) reaches every replica a bench starts, for the
  // V8 flags NODE_OPTIONS refuses (--trace-gc, say).
  const fromEnv = process.env['SLUICE_REPLICA_NODE_FLAGS']?.split(' ').filter(Boolean) ?? [];
  const flags = [...PROCESSOR_NODE_FLAGS, ...fromEnv, ...(options.nodeFlags ?? [])];
  const child = spawn(process.execPath, [...profile, ...flags, options.main ?? MAIN], {
    env: {
      ...process.env,
      SOURCE_TOPICS: options.source ?? `${options.prefix}.events`,
      CONSUMER_GROUP: options.group,
      SLUICE_TOPIC_PREFIX: options.prefix,
      PROCESSOR_ID: options.id,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      CONSUMER_SESSION_TIMEOUT_MS: '6000',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  mkdirSync(RESULTS, { recursive: true });
  const logFile = createWriteStream(join(RESULTS, `${options.prefix}.${options.id}.log`));
  child.stdout!.on('data', (chunk: Buffer) => {
    logFile.write(chunk);
    lines.push(...chunk.toString().split('\n'));
  });
  return { child, lines, metricsPort };
}

/** The replica's Prometheus exposition, as text. */
export async function metricsOf(replica: Replica): Promise<string> {
  return (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
}

/** Source records the replica has consumed (its Prometheus counter). */
export async function consumedBy(replica: Replica): Promise<number> {
  try {
    const text = await metricsOf(replica);
    const match = /records_consumed_total\{kind="source"\} (\d+)/.exec(text);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Deletes the run's topics (every name starting with `prefix`): a run leaves hundreds of
 * partitions behind, and a broker used for many runs would otherwise carry thousands (session
 * 24 saw no rate change from them, but a run should not depend on how many came before it).
 */
export async function deleteRunTopics(admin: Admin, prefix: string): Promise<void> {
  const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
  if (topics.length === 0) return;
  log(`deleting the run's ${topics.length} topics (${prefix}*)`);
  await admin.deleteTopics({ topics, timeout: 60_000 });
}

/** The transactions a replica committed so far, and the seconds their commits took together. */
export async function transactionsOf(
  replica: Replica,
): Promise<{ count: number; seconds: number }> {
  const text = await metricsOf(replica);
  const value = (name: string) =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    count: value('sluice_processor_transaction_commit_seconds_count'),
    seconds: value('sluice_processor_transaction_commit_seconds_sum'),
  };
}

export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * kafkajs 2.2.4 as published (the workspace's carries patches/kafkajs+2.2.4.patch), installed
 * once under .local/ from the npm registry; returns the path of its entry module.
 */
function stockKafkajs(): string {
  const prefix = join(ROOT, '.local', 'kafkajs-stock');
  const entry = join(prefix, 'node_modules', 'kafkajs', 'index.js');
  if (!existsSync(entry)) {
    log('  installing kafkajs 2.2.4 as published into .local/kafkajs-stock (once)');
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        'kafkajs@2.2.4',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  return entry;
}

/**
 * (a) of the end-to-end benches: the raw consume rate of `topic` by a plain kafkajs group in a
 * process of its own (bench/support/raw-consume.ts), stock or as Sluice runs kafkajs.
 */
export async function rawConsumeRate(
  topic: string,
  expected: number,
  options: { parse: boolean; stock: boolean; group: string; nodeFlags?: string[] },
): Promise<number> {
  const script = join(__dirname, 'raw-consume.ts');
  const flags = [
    `--topic=${topic}`,
    `--group=${options.group}`,
    `--expected=${expected}`,
    ...(options.parse ? ['--parse'] : []),
  ];
  const env = options.stock
    ? { ...process.env, SLUICE_BENCH_KAFKAJS: stockKafkajs() }
    : process.env;
  const child = spawn(
    process.execPath,
    [...PROCESSOR_NODE_FLAGS, ...(options.nodeFlags ?? []), '--import', 'tsx', script, ...flags],
    { stdio: ['ignore', 'pipe', 'inherit'], env },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the raw consumer exited with ${code}`);
  const { count, bytes, ms } = JSON.parse(output) as { count: number; bytes: number; ms: number };
  const label = `raw kafkajs${options.stock ? ' 2.2.4 as published' : ' as Sluice runs it'}${options.parse ? ' + JSON.parse' : ''}`;
  log(`  ${label}: ${fmt(count)} records (${fmt(bytes)} value bytes) in ${ms} ms`);
  return rate(count, ms);
}

/**
 * A process's CPU time so far (user + system) and its minor page faults (pages the kernel
 * mapped on first touch: V8's heap growing, and large buffers malloc takes from the OS), from
 * /proc.
 */
export function usageOf(pid: number): { cpuSeconds: number; minorFaults: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // minflt, utime and stime are the 10th, 14th and 15th fields, the 8th, 12th and 13th after
  // the command.
  return {
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
    minorFaults: Number(fields[7]),
  };
}

/** Linux's USER_HZ. */
const CLOCK_TICKS = 100;

/**
 * The local brokers' CPU time so far (scripts/kafka/kafka-up.sh writes their pids): they share
 * the machine with the replica, so what a run costs them is part of its cost (NaN elsewhere).
 */
export function brokerCpuSeconds(): number {
  const home = '.local/kafka';
  let nodes = 1;
  try {
    nodes = Number(readFileSync(`${home}/nodes`, 'utf8').trim());
  } catch {
    return NaN;
  }
  let total = 0;
  for (let n = 1; n <= nodes; n++) {
    const dir = nodes === 1 ? home : `${home}/node-${n}`;
    try {
      total += usageOf(Number(readFileSync(`${dir}/broker.pid`, 'utf8').trim())).cpuSeconds;
    } catch {
      return NaN;
    }
  }
  return total;
}
