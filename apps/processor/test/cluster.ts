// Test harness for the processor against the real broker: replicas are real processes of the
// built app (so a test can SIGKILL one), definitions are written to the pipelines topic the way
// the admin's relay writes them, and outputs are read read_committed.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { internalTopics, validateDefinition, validateGraphDefinition } from '@sluice/contracts';
import type {
  EventEnvelope,
  GraphDefinitionInput,
  PipelineDefinitionInput,
} from '@sluice/contracts';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { planOfGraph, runGraphReference, runReference } from '@sluice/operators';
import type { GraphReferenceResult, ReferenceResult, SourcedEvent } from '@sluice/operators';
import { uniqueName } from '@sluice/kafka/testing';
import { freePort, until, withoutEpoch } from '@sluice/testing';
import { logLevel, Partitioners } from 'kafkajs';
import type { Kafka, Producer } from 'kafkajs';

import { describeShortRead } from './short-read-report';

const MAIN = join(__dirname, '..', 'dist', 'main.js');

/** A linear definition as a test writes it (its id given). */
export type LinearDefinition = PipelineDefinitionInput & { id: string };

export class Replica {
  readonly output: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly id: string,
    readonly metricsPort: number,
    private readonly child: ChildProcess,
  ) {
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line) this.output.push(line);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Spawns the built app; `untilReady` false returns at once (it is still starting). */
  static async start(id: string, env: Record<string, string>, untilReady = true): Promise<Replica> {
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        PROCESSOR_ID: id,
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const replica = new Replica(id, metricsPort, child);
    if (!untilReady) return replica;
    await until(() => replica.ready(), { timeoutMs: 60_000, what: `replica ${id} ready` }).catch(
      (error: Error) => {
        child.kill('SIGKILL');
        throw new Error(`${error.message}\n${replica.output.slice(-30).join('\n')}`);
      },
    );
    return replica;
  }

  async ready(): Promise<boolean> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.metricsPort}/health`);
      return response.status === 200;
    } catch {
      return false;
    }
  }

  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)).text();
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** SIGTERM and wait for the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    return this.exited;
  }

  /** Waits for a structured log entry that has every field of `fields`. */
  async waitForLog(fields: Record<string, unknown>, timeoutMs = 30_000): Promise<void> {
    const matches = (entry: Record<string, unknown>) =>
      Object.entries(fields).every(([name, value]) => entry[name] === value);
    await until(() => this.logs().some(matches), {
      timeoutMs,
      what: `log ${JSON.stringify(fields)} from ${this.id}`,
    });
  }

  logs(): Array<Record<string, unknown>> {
    return this.output.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }
}

export interface KeyedValue {
  key: string | null;
  /** The value as published, without its epoch. */
  value: unknown;
  /** The state epoch the value carried. */
  epoch: string | undefined;
  partition: number;
}

/** One isolated Sluice installation on the shared broker: its own prefix, source and group. */
export class TestCluster {
  readonly kafka: Kafka;
  readonly prefix = uniqueName('t').replace(/\./g, '-');
  readonly source = `${this.prefix}.events`;
  readonly group = `${this.prefix}.processor`;
  readonly topics = internalTopics(this.prefix);
  private producer: Producer | undefined;
  private readonly replicas = new Set<Replica>();
  private readonly started: Replica[] = [];
  /** Each pipeline's creation time, as the admin would keep it. */
  private readonly creations = new Map<string, string>();
  /** What the broker held behind each read that came short (short-read-report.ts). */
  private readonly shortReads: string[] = [];

  constructor(
    readonly partitions = 6,
    /** A broker of the test's own (`host:port`); the shared one when omitted. */
    private readonly broker?: string,
  ) {
    this.kafka = createKafka({
      clientId: 'processor-e2e',
      logLevel: logLevel.NOTHING,
      ...(broker ? { brokers: [broker] } : {}),
      retry: { initialRetryTime: 200, retries: 20 },
    });
  }

  env(): Record<string, string> {
    return {
      ...(this.broker ? { KAFKA_BROKERS: this.broker } : {}),
      SOURCE_TOPICS: this.source,
      CONSUMER_GROUP: this.group,
      SLUICE_TOPIC_PREFIX: this.prefix,
      STATS_INTERVAL_MS: '500',
      CONSUMER_SESSION_TIMEOUT_MS: '6000',
    };
  }

  async setup(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [
      { topic: this.source, numPartitions: this.partitions },
      { topic: this.topics.pipelines, numPartitions: 1, compacted: true },
    ]);
    await admin.disconnect();
    // Idempotent, so that a retry during a broker restart cannot duplicate a source event.
    this.producer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await this.producer.connect();
  }

  async createTopic(topic: string, numPartitions: number, compacted = false): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic, numPartitions, compacted }]);
    await admin.disconnect();
  }

  async teardown(): Promise<void> {
    await Promise.all([...this.replicas].map((replica) => replica.stop()));
    this.saveLogs();
    await this.producer?.disconnect();
  }

  /**
   * With SLUICE_TEST_LOGS set, every replica's output is kept there, with the reads that came
   * short, under the test's name (`clusters.tsv`): jest.failure-summary.js prints a failed
   * test's own logs beside its failure.
   */
  private saveLogs(): void {
    const directory = process.env['SLUICE_TEST_LOGS'];
    if (!directory) return;
    mkdirSync(directory, { recursive: true });
    for (const replica of this.started)
      writeFileSync(
        join(directory, `${this.prefix}.${replica.id}.log`),
        replica.output.join('\n') + '\n',
      );
    if (this.shortReads.length > 0)
      writeFileSync(join(directory, `${this.prefix}.short-reads.txt`), this.shortReads.join('\n'));
    const test = expect.getState().currentTestName ?? '(outside a test)';
    appendFileSync(join(directory, 'clusters.tsv'), `${this.prefix}\t${test}\n`);
  }

  output(name: string): string {
    return `${this.prefix}.${name}`;
  }

  /** Every replica started so far, stopped or not (their logs stay). */
  get startedReplicas(): readonly Replica[] {
    return this.started;
  }

  async startReplica(
    id: string,
    env: Record<string, string> = {},
    untilReady = true,
  ): Promise<Replica> {
    const replica = await Replica.start(
      `${this.prefix}-${id}`,
      { ...this.env(), ...env },
      untilReady,
    );
    this.replicas.add(replica);
    this.started.push(replica);
    void replica.exited.then(() => this.replicas.delete(replica));
    return replica;
  }

  /**
   * Writes a definition, in either form, as the admin's relay would (version and generation
   * included).
   */
  async putPipeline(
    definition: (PipelineDefinitionInput | GraphDefinitionInput) & { id: string },
    stored: {
      version?: number;
      reset_generation?: number;
      created_at?: string;
      /** A replay: its generation and where it starts. */
      replay?: { generation: number; from: string };
    } = {},
  ): Promise<void> {
    const value = {
      ...definition,
      // This cluster's replicas' group, unless the test binds the pipeline to another.
      processor_group: definition.processor_group ?? this.group,
      ...('sources' in definition
        ? {}
        : { source_event_types: definition.source_event_types ?? [] }),
      enabled: definition.enabled ?? true,
      version: stored.version ?? 1,
      reset_generation: stored.reset_generation ?? 0,
      // As the admin does: the time of the first write, kept by every later one (a new
      // pipeline reads its sources from its creation on).
      created_at: this.createdAt(definition.id, stored.created_at),
      updated_at: new Date().toISOString(),
      ...(stored.replay
        ? { replay_generation: stored.replay.generation, replay_from: stored.replay.from }
        : {}),
    };
    await this.producer!.send({
      topic: this.topics.pipelines,
      messages: [{ key: definition.id, value: JSON.stringify(value) }],
    });
  }

  private createdAt(id: string, given: string | undefined): string {
    const createdAt = given ?? this.creations.get(id) ?? new Date().toISOString();
    this.creations.set(id, createdAt);
    return createdAt;
  }

  async deletePipeline(id: string): Promise<void> {
    this.creations.delete(id);
    await this.producer!.send({
      topic: this.topics.pipelines,
      messages: [{ key: id, value: null }],
    });
  }

  /**
   * Events keyed by entity, as producers write them, to the source (or `topic`); raw strings are
   * sent as they are. `eventTimeStamps`: each record's timestamp is its event's time, as a
   * producer replaying history sets it (else the time it is sent).
   */
  async produce(
    events: Array<EventEnvelope | string | Buffer>,
    options: { chunk?: number; topic?: string; eventTimeStamps?: boolean } = {},
  ): Promise<void> {
    const chunk = options.chunk ?? 5000;
    const stamp = (event: EventEnvelope) =>
      options.eventTimeStamps ? { timestamp: String(Date.parse(String(event.timestamp))) } : {};
    for (let i = 0; i < events.length; i += chunk) {
      await this.producer!.send({
        topic: options.topic ?? this.source,
        messages: events
          .slice(i, i + chunk)
          .map((event) =>
            typeof event === 'string' || Buffer.isBuffer(event)
              ? { key: null, value: event }
              : { key: event.entity_id ?? null, value: JSON.stringify(event), ...stamp(event) },
          ),
      });
    }
  }

  /** Events to one source partition, as they are. */
  async produceTo(partition: number, events: EventEnvelope[]): Promise<void> {
    await this.producer!.send({
      topic: this.source,
      messages: events.map((event) => ({ partition, key: null, value: JSON.stringify(event) })),
    });
  }

  /**
   * One event per partition of the source (or of `topic`, of `partitions`): event time only, no
   * pipeline matches its type.
   */
  async tickEveryPartition(
    time: number,
    { topic = this.source, partitions = this.partitions } = {},
  ): Promise<EventEnvelope[]> {
    const ticks: EventEnvelope[] = [];
    for (let partition = 0; partition < partitions; partition++) {
      const tick = {
        event_type: 'clock.tick',
        timestamp: new Date(time).toISOString(),
        payload: { partition },
      };
      ticks.push(tick);
      await this.producer!.send({
        topic,
        messages: [{ partition, key: null, value: JSON.stringify(tick) }],
      });
    }
    return ticks;
  }

  /** Initializes a transactional producer with this id: its previous owner is fenced. */
  async fence(transactionalId: string): Promise<void> {
    const producer = this.kafka.producer({
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    // kafkajs sends InitProducerId for a transactional id at the first transaction.
    const transaction = await producer.transaction();
    await transaction.abort();
    await producer.disconnect();
  }

  /** Reads a topic with its headers (the dead-letter topic). */
  async readWithHeaders(topic: string, expected: number) {
    const records: Array<{ value: string | null; headers: Record<string, string> }> = [];
    const consumer = this.kafka.consumer({
      groupId: uniqueName('e2e-reader'),
      maxWaitTimeInMs: 100,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const headers = Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
          );
          records.push({ value: message.value?.toString('utf8') ?? null, headers });
        },
      });
      await until(() => records.length >= expected, {
        what: `${expected} records on ${topic}`,
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return records;
    } finally {
      await consumer.disconnect();
    }
  }

  /** Reads a topic read_committed until `expected` records came and `settleMs` passed quietly. */
  async read(
    topic: string,
    expected: number,
    options: { timeoutMs?: number; settleMs?: number } = {},
  ) {
    const records: KeyedValue[] = [];
    const consumer = this.kafka.consumer({
      groupId: uniqueName('e2e-reader'),
      readUncommitted: false,
      maxWaitTimeInMs: 100,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ partition, message }) => {
          const parsed = withoutEpoch(
            message.value === null ? null : JSON.parse(message.value.toString('utf8')),
          );
          records.push({
            partition,
            key: message.key?.toString('utf8') ?? null,
            value: parsed.value,
            epoch: parsed.epoch,
          });
        },
      });
      const timeoutMs = options.timeoutMs ?? 90_000;
      await until(() => records.length >= expected, {
        timeoutMs,
        what: `${expected} records on ${topic} (have ${records.length})`,
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? 1500));
      if (records.length < expected) await this.noteShortRead(topic, expected, records, timeoutMs);
      return records;
    } finally {
      await consumer.disconnect();
    }
  }

  /** What the broker holds behind a read that came short, kept for the failure's post-mortem. */
  private async noteShortRead(
    topic: string,
    expected: number,
    records: KeyedValue[],
    waitedMs: number,
  ): Promise<void> {
    const readByPartition = new Map<number, number>();
    for (const { partition } of records)
      readByPartition.set(partition, (readByPartition.get(partition) ?? 0) + 1);
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      const read = { topic, expected, readByPartition, waitedMs, prefix: this.prefix };
      this.shortReads.push(await describeShortRead(admin, { ...read, group: this.group }));
    } catch (error) {
      this.shortReads.push(
        `short read of ${topic}: the broker could not be asked (${String(error)})`,
      );
    } finally {
      await admin.disconnect();
    }
  }
}

/** Canonical, order-free form of keyed results for comparing runs. */
export function canonical(records: Array<{ key: string | null; value: unknown }>): string[] {
  return records.map((r) => JSON.stringify([r.key, r.value])).sort();
}

/** The reference run of a definition as the admin would store it (defaults applied). */
export function reference(definition: PipelineDefinitionInput, events: unknown[]): ReferenceResult {
  const validation = validateDefinition(definition);
  if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
  return runReference(validation.definition, events);
}

/** The reference run of a graph as the admin would store it (defaults applied). */
export function graphReference(
  definition: GraphDefinitionInput,
  events: SourcedEvent[],
): GraphReferenceResult {
  const validation = validateGraphDefinition(definition);
  if (!validation.valid) throw new Error(JSON.stringify(validation.errors));
  return runGraphReference(planOfGraph(validation.graph), events);
}
