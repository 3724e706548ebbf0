// npm run chaos [-- --events 5000000 --replicas 3 --kill-every 10 --min-kills 3
//                   --brokers 3 --broker-kill-every 30 --freeze-every 25]
// Sluice under failure, end to end: a broker (or a cluster of --brokers nodes) of its own, the
// admin, N processor replicas, three windowed pipelines (tumbling, sliding, session) registered
// through the REST API, and N orders produced to a 6-partition source keyed by entity. While
// they flow, a random replica is killed with SIGKILL every few seconds (and restarted), a random
// replica is frozen past its session timeout (a zombie its successor must fence), a random
// broker node is SIGKILLed and started again, and the broker is restarted once. Then every
// output topic is read read_committed and compared with the reference run over the same events:
// lost, duplicated and wrong results per pipeline, a JSON report and a Markdown summary.
// Exits non-zero on any difference, any replica crash, or a run that does not settle.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import {
  changelogTopic,
  internalTopics,
  repartitionTopic,
  validateDefinition,
} from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinition } from '@sluice/contracts';
import {
  createKafka,
  ensureTopics,
  fetchStableOffset,
  findOpenTransactions,
  readTopicToEnd,
} from '@sluice/kafka';
import { runReference } from '@sluice/operators';
import { generateOrders } from '@sluice/operators/testing';
import { freePort, sleep, until, withoutEpoch } from '@sluice/testing';
import { logLevel, Partitioners } from 'kafkajs';
import type { Admin, Kafka, Producer, Transaction } from 'kafkajs';

import { chaosPipelines } from './chaos/pipelines';
import { problems, writeReport } from './chaos/report';
import type { ChaosReport, PipelineReport } from './chaos/report';
import { AppProcess, ChaosBroker, ChaosDatabase } from './chaos/system';
import { verify } from './chaos/verify';
import type { KeyedRecord } from './chaos/verify';
import { DAY, fmt, log, notCommitted, PARTITIONS, RESULTS } from './support/kafka-bench';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '5000000' },
    replicas: { type: 'string', default: '3' },
    /** Seconds between two kills. */
    'kill-every': { type: 'string', default: '10' },
    /** Kills to reach even if the events are all produced sooner. */
    'min-kills': { type: 'string', default: '3' },
    /** Restart the broker when this fraction of the events is produced. */
    'broker-restart-at': { type: 'string', default: '0.4' },
    /** Customers (default: one per 2,500 orders, so that sessions hold several orders). */
    entities: { type: 'string' },
    days: { type: 'string', default: '10' },
    'broker-port': { type: 'string', default: '19700' },
    /** Broker nodes (3: replication 3, min ISR 2). */
    brokers: { type: 'string', default: '1' },
    /** Seconds between two broker-node SIGKILLs (default 30 with several nodes, else none). */
    'broker-kill-every': { type: 'string' },
    /** Broker-node kills to reach (default 5 with several nodes). */
    'min-broker-kills': { type: 'string' },
    /** Seconds between two freezes of a replica past its session timeout (0: none). */
    'freeze-every': { type: 'string', default: '0' },
    /** Minutes to wait for the replicas to commit everything once the chaos stops. */
    'settle-minutes': { type: 'string', default: '30' },
    /** Where the report and the processes' logs go (default bench/results/chaos-<time>). */
    out: { type: 'string' },
    seed: { type: 'string', default: '7' },
  },
});
const N = Number(args.events);
const REPLICAS = Number(args.replicas);
const KILL_EVERY_MS = Number(args['kill-every']) * 1000;
const MIN_KILLS = Number(args['min-kills']);
const BROKER_RESTART_AT = Number(args['broker-restart-at']);
const ENTITIES = Number(args.entities ?? Math.max(20, Math.round(N / 2500)));
const BROKERS = Number(args.brokers);
const BROKER_KILL_EVERY_MS = Number(args['broker-kill-every'] ?? (BROKERS > 1 ? 30 : 0)) * 1000;
const MIN_BROKER_KILLS = Number(
  args['min-broker-kills'] ?? (BROKERS > 1 && BROKER_KILL_EVERY_MS > 0 ? 5 : 0),
);
const FREEZE_EVERY_MS = Number(args['freeze-every']) * 1000;
const SESSION_TIMEOUT_MS = 6000;
const OUT = args.out ?? join(RESULTS, `chaos-${new Date().toISOString().replace(/[:.]/g, '-')}`);

const started = Date.now();
const elapsed = () => Math.round((Date.now() - started) / 100) / 10;

class Chaos {
  readonly prefix = `chaos-${randomUUID().slice(0, 8)}`;
  readonly source = `${this.prefix}.events`;
  readonly group = `${this.prefix}.processor`;
  readonly topics = internalTopics(this.prefix);
  readonly broker = new ChaosBroker(Number(args['broker-port']), BROKERS);
  readonly database = new ChaosDatabase();
  readonly kafka: Kafka;
  readonly replicas: AppProcess[] = [];
  admin: AppProcess | undefined;
  adminUrl = '';
  readonly token = randomBytes(24).toString('hex');
  readonly kills: Array<{ at: number; replica: string }> = [];
  readonly freezes: Array<{ at: number; replica: string; seconds: number }> = [];
  readonly brokerKills: Array<{ at: number; node: number; downSeconds: number }> = [];
  brokerRestart: { at: number; downSeconds: number } | undefined;
  /** Broker changes (kills, the restart) one at a time: two would take the quorum down. */
  private brokerChanges: Promise<void> = Promise.resolve();
  private killing: Promise<void> = Promise.resolve();
  /** No replica is killed while set: from the broker's restart until its hanging commits settle. */
  private killsPaused = false;
  /** Lifts the pause: settles once every offset commit reads stable after the restart. */
  private unpausing: Promise<void> = Promise.resolve();
  /** They never did: the run stops, and stopping the kills reports why. */
  pauseFailed = false;
  /** The topics whose offsets the group commits: the source and each repartition topic. */
  private committedTopics: string[] = [];
  /** The topics the replicas write in transactions: internal topics, outputs, dead letters. */
  private writtenTopics: string[] = [];

  constructor() {
    this.kafka = createKafka({
      clientId: 'sluice-chaos',
      brokers: this.broker.address.split(','),
      logLevel: logLevel.NOTHING,
      // The run's own clients ride out the broker restart like the replicas do.
      retry: { initialRetryTime: 200, maxRetryTime: 2000, retries: 60 },
    });
  }

  async start(definitions: Array<{ id: string; output: string }>): Promise<void> {
    mkdirSync(OUT, { recursive: true });
    this.committedTopics = [
      this.source,
      ...definitions.map((d) => repartitionTopic(d.id, this.prefix)),
    ];
    this.writtenTopics = [
      this.topics.dlq,
      ...definitions.flatMap((d) => [
        repartitionTopic(d.id, this.prefix),
        changelogTopic(d.id, this.prefix),
        d.output,
        `${d.output}.late`,
      ]),
    ];
    log(`[${elapsed()} s] starting a broker on ${this.broker.address} and a database`);
    await this.broker.up();
    await this.database.create();
    const admin = this.kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: this.source, numPartitions: PARTITIONS }]);
    await admin.disconnect();

    const adminPort = await freePort();
    this.adminUrl = `http://127.0.0.1:${adminPort}`;
    this.admin = new AppProcess(
      'admin',
      'admin',
      {
        KAFKA_BROKERS: this.broker.address,
        SLUICE_TOPIC_PREFIX: this.prefix,
        DATABASE_URL: this.database.url,
        SLUICE_ADMIN_TOKEN: this.token,
        ADMIN_PORT: String(adminPort),
        LOG_LEVEL: 'info',
      },
      OUT,
    );
    this.admin.start();
    await until(async () => (await fetch(`${this.adminUrl}/health/ready`)).ok, {
      what: 'admin ready',
      intervalMs: 250,
    });
    for (const definition of definitions) {
      const response = await fetch(`${this.adminUrl}/api/v1/pipelines`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        // Bound to this run's processor group, the one its replicas form.
        body: JSON.stringify({ ...definition, processor_group: this.group }),
      });
      if (response.status !== 201)
        throw new Error(`creating ${definition.id}: ${response.status} ${await response.text()}`);
    }
    log(`[${elapsed()} s] admin on ${this.adminUrl}; ${definitions.length} pipelines created`);

    for (let i = 0; i < REPLICAS; i++) {
      const replica = new AppProcess(
        `processor-${i}`,
        'processor',
        {
          KAFKA_BROKERS: this.broker.address,
          SOURCE_TOPICS: this.source,
          CONSUMER_GROUP: this.group,
          SLUICE_TOPIC_PREFIX: this.prefix,
          PROCESSOR_ID: `chaos-${i}`,
          METRICS_PORT: String(await freePort()),
          LOG_LEVEL: 'info',
          CONSUMER_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        },
        OUT,
      );
      replica.start();
      this.replicas.push(replica);
    }
    // Events produced before a replica knows the pipelines would be (rightly) not processed.
    await until(
      async () => {
        for (const replica of this.replicas) {
          const health = (await (await fetch(`${replica.url}/health`)).json()) as {
            pipelines: number;
          };
          if (health.pipelines < definitions.length) return false;
        }
        return true;
      },
      { what: 'every replica running every pipeline', timeoutMs: 120_000, intervalMs: 250 },
    );
    log(`[${elapsed()} s] ${REPLICAS} replicas running the pipelines`);
  }

  /** Every KILL_EVERY_MS: a random running replica gets SIGKILL and is started again. */
  startKilling(): () => Promise<void> {
    const timer = setInterval(() => {
      this.killing = this.killing
        .then(async () => {
          if (this.killsPaused) return;
          const candidates = this.replicas.filter((replica) => replica.running);
          const victim = candidates[Math.floor(Math.random() * candidates.length)];
          if (!victim) return;
          await victim.stop('SIGKILL');
          this.kills.push({ at: elapsed(), replica: victim.name });
          log(`[${elapsed()} s] killed ${victim.name} (SIGKILL) and restarted it`);
          victim.start();
        })
        .catch(
          (error: Error) => void log(`[${elapsed()} s] killing a replica failed: ${error.message}`),
        );
    }, KILL_EVERY_MS);
    return async () => {
      clearInterval(timer);
      await Promise.all([this.killing, this.unpausing]);
    };
  }

  /** Every FREEZE_EVERY_MS: a random replica is frozen past its session timeout, then resumed. */
  startFreezing(): () => Promise<void> {
    if (FREEZE_EVERY_MS === 0) return async () => undefined;
    const freezeMs = SESSION_TIMEOUT_MS + 4000;
    let freezing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      freezing = freezing
        .then(async () => {
          const candidates = this.replicas.filter((replica) => replica.running);
          const victim = candidates[Math.floor(Math.random() * candidates.length)];
          if (!victim) return;
          const at = elapsed();
          log(`[${at} s] freezing ${victim.name} (SIGSTOP) for ${freezeMs / 1000} s`);
          await victim.freeze(freezeMs);
          this.freezes.push({ at, replica: victim.name, seconds: freezeMs / 1000 });
        })
        .catch(
          (error: Error) =>
            void log(`[${elapsed()} s] freezing a replica failed: ${error.message}`),
        );
    }, FREEZE_EVERY_MS);
    return async () => {
      clearInterval(timer);
      await freezing;
    };
  }

  /** Every BROKER_KILL_EVERY_MS: a random broker node gets SIGKILL and is started again. */
  startKillingBrokers(): () => Promise<void> {
    if (BROKER_KILL_EVERY_MS === 0) return async () => undefined;
    const timer = setInterval(() => {
      this.brokerChanges = this.brokerChanges
        .then(async () => {
          const node = 1 + Math.floor(Math.random() * BROKERS);
          const at = elapsed();
          const down = Date.now();
          await this.broker.kill(node);
          log(`[${at} s] killed broker node ${node} (SIGKILL)`);
          await sleep(3000);
          await this.broker.up();
          const downSeconds = Math.round((Date.now() - down) / 100) / 10;
          this.brokerKills.push({ at, node, downSeconds });
          log(`[${elapsed()} s] broker node ${node} back after ${downSeconds} s`);
        })
        .catch(
          (error: Error) =>
            void log(`[${elapsed()} s] killing a broker node failed: ${error.message}`),
        );
    }, BROKER_KILL_EVERY_MS);
    return async () => {
      clearInterval(timer);
      await this.brokerChanges;
    };
  }

  /**
   * A controlled shutdown of every node, and a start. A single node's shutdown can complete a
   * transaction with some of its markers dropped (README, Known issues): only the replica that
   * ran it knows where its markers should be, so none is killed from the shutdown until every
   * offset commit of the group reads stable again and no transaction from before the restart is
   * open on a partition the replicas write (their owners settled any that hung).
   */
  restartBroker(): Promise<void> {
    const restart = this.brokerChanges.then(async () => {
      const at = elapsed();
      this.killsPaused = true;
      await this.killing;
      log(`[${at} s] restarting the broker${BROKERS > 1 ? 's' : ''}; no replica kills meanwhile`);
      const down = Date.now();
      await this.broker.down();
      await sleep(1000);
      await this.broker.up();
      this.brokerRestart = { at, downSeconds: Math.round((Date.now() - down) / 100) / 10 };
      log(`[${elapsed()} s] broker back after ${this.brokerRestart.downSeconds} s`);
      // Production goes on meanwhile: the replicas' next commits are what settle most of them.
      const ends = await this.partitionEnds();
      this.unpausing = this.untilSettled(ends).then(() => {
        this.killsPaused = false;
        log(`[${elapsed()} s] no offset commit or transaction of the group hangs; kills go on`);
      });
      // Handled here so that a failure waits to be reported where the chaos stops.
      this.unpausing.catch(() => (this.pauseFailed = true));
    });
    this.brokerChanges = restart;
    return restart;
  }

  /** Each written partition's high watermark (`topic/partition`), as the broker answers now. */
  private async partitionEnds(): Promise<Map<string, bigint>> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = new Map<string, bigint>();
      for (const topic of this.writtenTopics) {
        // READ_UNCOMMITTED: the high watermark (the default answers the last stable offset).
        const offsets = await admin.fetchTopicOffsets(topic, { isolationLevel: 0 }).catch(() => []);
        for (const { partition, high } of offsets) ends.set(`${topic}/${partition}`, BigInt(high));
      }
      return ends;
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Until one OffsetFetch with require_stable answers every partition the group commits without
   * UNSTABLE_OFFSET_COMMIT (one in flight passes within milliseconds), and no transaction that
   * began before `ends` (the restart) is open on a written partition: nothing hangs.
   */
  private async untilSettled(ends: Map<string, bigint>): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    const partitions = this.writtenTopics.map((topic) => ({
      topic,
      partitions: [...ends.keys()]
        .filter((key) => key.slice(0, key.lastIndexOf('/')) === topic)
        .map((key) => Number(key.slice(key.lastIndexOf('/') + 1))),
    }));
    try {
      await until(
        async () => {
          await admin.fetchOffsets({
            groupId: this.group,
            topics: this.committedTopics,
            requireStable: true,
          });
          const open = await findOpenTransactions(
            admin,
            partitions.filter((p) => p.partitions.length > 0),
          );
          const hanging = open.filter(
            (t) => BigInt(t.startOffset) < (ends.get(`${t.topic}/${t.partition}`) ?? 0n),
          );
          if (hanging.length > 0)
            throw new Error(
              `open since the restart: ${hanging.map((t) => `${t.topic}/${t.partition}@${t.startOffset}`).join(', ')}`,
            );
          return true;
        },
        { what: 'nothing of the group hanging', timeoutMs: 120_000, intervalMs: 250 },
      );
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Writes the events in chunks, each in a transaction that also commits the count written so
   * far, as the offset of a group of its own on the source's partition 0 (a count, not a
   * position: nothing consumes that group, and it is deleted at the end). After a failure a new
   * producer opens its first transaction, whose InitProducerId fences the old one and settles
   * what it left open (a commit that landed completes, anything else aborts); only then is the
   * count read back, with require_stable, and production goes on from it. So the source holds
   * every event once, committed, in order, whatever the brokers do. kafkajs' idempotent
   * producer alone did not: a 5M run with broker kills ended on OUT_OF_ORDER_SEQUENCE_NUMBER
   * (kafkajs' send retry, since patched: README, "kafkajs, patched in the open").
   */
  async produce(events: EventEnvelope[], onProgress: (sent: number) => Promise<void>) {
    const admin = this.kafka.admin();
    await admin.connect();
    const written = async () =>
      Number((await fetchStableOffset(admin, this.progressGroup, this.source, 0))?.offset ?? 0);
    const chunk = 10_000;
    let producer: Producer | undefined;
    let transaction: Transaction | undefined;
    let sent = 0;
    let failures = 0;
    let lastReport = 0;
    while (sent < events.length) {
      try {
        if (producer === undefined) {
          producer = await this.sourceProducer();
          transaction = await producer.transaction();
          sent = await written();
          if (sent >= events.length) break;
        } else {
          transaction = await producer.transaction();
        }
        const until = Math.min(events.length, sent + chunk);
        await transaction.send({
          topic: this.source,
          messages: events
            .slice(sent, until)
            .map((event) => ({ key: event.entity_id ?? null, value: JSON.stringify(event) })),
        });
        await transaction.sendOffsets({
          consumerGroupId: this.progressGroup,
          topics: [{ topic: this.source, partitions: [{ partition: 0, offset: String(until) }] }],
        });
        await transaction.commit();
        sent = until;
        failures = 0;
      } catch (error) {
        failures += 1;
        log(`[${elapsed()} s] event producer (failure ${failures}): ${(error as Error).message}`);
        if (failures > 30) throw error;
        await transaction?.abort().catch(() => undefined);
        await producer?.disconnect().catch(() => undefined);
        producer = undefined;
        await sleep(Math.min(5000, 250 * failures));
        continue;
      }
      await onProgress(sent);
      if (Date.now() - lastReport > 2000 || sent === events.length) {
        lastReport = Date.now();
        log(
          `[${elapsed()} s] produced ${fmt(sent)} / ${fmt(events.length)}; ${this.kills.length} kills`,
        );
      }
    }
    await transaction?.abort().catch(() => undefined);
    await producer?.disconnect();
    await admin.deleteGroups([this.progressGroup]).catch(() => undefined);
    await admin.disconnect();
  }

  /** The event producer's transactional id, and the group its count is committed in. */
  private get progressGroup(): string {
    return `${this.prefix}.event-producer`;
  }

  /** The events' producer; its InitProducerId settles whatever an earlier one left open. */
  private async sourceProducer(): Promise<Producer> {
    const producer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      transactionalId: this.progressGroup,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    return producer;
  }

  /** One time-only event per partition: the watermark passes every window's end. */
  async produceTicks(time: number): Promise<EventEnvelope[]> {
    const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const ticks: EventEnvelope[] = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const tick = {
        event_type: 'clock.tick',
        timestamp: new Date(time).toISOString(),
        payload: {},
      };
      ticks.push(tick);
      await producer.send({
        topic: this.source,
        messages: [{ partition, value: JSON.stringify(tick) }],
      });
    }
    await producer.disconnect();
    return ticks;
  }

  /** The source's committed records (an aborted chunk's records and the markers not counted). */
  async sourceRecords(): Promise<number> {
    let records = 0;
    await readTopicToEnd(this.kafka, this.source, () => (records += 1), {
      groupOwner: this.group,
      stallTimeoutMs: 120_000,
    });
    return records;
  }

  /** Waits until the group has committed every source and repartition record. */
  async settle(admin: Admin, definitions: PipelineDefinition[]): Promise<number> {
    const watched = [this.source, ...definitions.map((d) => repartitionTopic(d.id, this.prefix))];
    const deadline = Date.now() + Number(args['settle-minutes']) * 60_000;
    const settleStarted = Date.now();
    let lastReport = 0;
    for (;;) {
      for (const replica of this.replicas) if (!replica.running) replica.start();
      const behind = await notCommitted(admin, this.group, watched).catch(() => -1);
      if (behind === 0) return (Date.now() - settleStarted) / 1000;
      if (Date.now() > deadline) throw new Error(`not settled: ${fmt(behind)} records uncommitted`);
      if (Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        log(
          `[${elapsed()} s] settling: ${behind < 0 ? '?' : fmt(behind)} records not committed yet`,
        );
      }
      await sleep(500);
    }
  }

  async read(topic: string): Promise<KeyedRecord[]> {
    const records: KeyedRecord[] = [];
    await readTopicToEnd(
      this.kafka,
      topic,
      (record) =>
        records.push({
          key: record.key,
          // The epoch a value carries is not the reference run's to compare.
          value: withoutEpoch(record.value === null ? null : JSON.parse(record.value)).value,
        }),
      { groupOwner: this.group, stallTimeoutMs: 120_000 },
    ).catch((error: Error) => {
      // A topic nothing was written to may not exist: it holds no records.
      if (!/does not host this topic-partition|not exist/i.test(error.message)) throw error;
    });
    return records;
  }

  /** Stops everything; the broker's data stays for a post-mortem (kafka-dump-log) if asked. */
  async stop(keepBrokerData: boolean): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.stop()));
    await this.admin?.stop();
    if (keepBrokerData) {
      await this.broker.down();
      log(`broker data kept in ${this.broker.directory}`);
    } else {
      await this.broker.destroy();
    }
    await this.database.drop().catch(() => undefined);
  }
}

function validated(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

async function main(): Promise<void> {
  const chaos = new Chaos();
  const definitions = chaosPipelines(chaos.prefix).map(validated);
  const start = Date.UTC(2026, 10, 1);
  const days = Number(args.days);
  log(`generating ${fmt(N)} orders over ${days} days for ${fmt(ENTITIES)} customers`);
  const events = generateOrders({
    count: N,
    start,
    stepMs: (days * DAY) / N,
    entities: ENTITIES,
    seed: Number(args.seed),
  });
  let report: ChaosReport | undefined;
  const stoppers: Array<() => Promise<void>> = [];
  try {
    await chaos.start(definitions);
    const produceStarted = Date.now();
    const stopKilling = chaos.startKilling();
    const stopFreezing = chaos.startFreezing();
    const stopKillingBrokers = chaos.startKillingBrokers();
    stoppers.push(stopKilling, stopFreezing, stopKillingBrokers);
    let brokerRestarted = false;
    await chaos.produce(events, async (sent) => {
      if (!brokerRestarted && sent >= N * BROKER_RESTART_AT) {
        brokerRestarted = true;
        await chaos.restartBroker();
      }
    });
    const produceSeconds = (Date.now() - produceStarted) / 1000;
    if (!brokerRestarted) await chaos.restartBroker();
    await until(
      () =>
        chaos.pauseFailed ||
        (chaos.kills.length >= MIN_KILLS && chaos.brokerKills.length >= MIN_BROKER_KILLS),
      {
        what: `${MIN_KILLS} kills and ${MIN_BROKER_KILLS} broker kills`,
        timeoutMs: 900_000,
        intervalMs: 250,
      },
    );
    await Promise.all([stopKilling(), stopFreezing(), stopKillingBrokers()]);
    log(
      `[${elapsed()} s] chaos over: ${chaos.kills.length} kills, ${chaos.freezes.length} freezes, ${chaos.brokerKills.length} broker kills, one broker restart; settling`,
    );

    const ticks = await chaos.produceTicks(start + (days + 2) * DAY);
    const admin = chaos.kafka.admin();
    await admin.connect();
    const settleSeconds = await chaos.settle(admin, definitions);
    const inSource = await chaos.sourceRecords();
    await admin.disconnect();
    log(`[${elapsed()} s] settled; reading the outputs and running the reference`);

    const pipelines: PipelineReport[] = [];
    for (const definition of definitions) {
      const expected = runReference(definition, [...events, ...ticks]);
      const received = await chaos.read(definition.output);
      const late = await chaos.read(`${definition.output}.late`);
      pipelines.push({
        id: definition.id,
        name: definition.name,
        output: definition.output,
        ...verify(expected.results, received),
        late: { expected: expected.late.length, received: late.length },
      });
    }
    const deadLetters = (await chaos.read(chaos.topics.dlq)).length;
    report = {
      date: new Date().toISOString(),
      events: N,
      sourceRecords: { expected: N + ticks.length, inTopic: inSource },
      replicas: REPLICAS,
      killEverySeconds: KILL_EVERY_MS / 1000,
      kills: chaos.kills,
      freezes: chaos.freezes,
      brokers: BROKERS,
      brokerKills: chaos.brokerKills,
      brokerRestart: chaos.brokerRestart,
      crashes: chaos.replicas.reduce((sum, r) => sum + r.crashes, 0) + (chaos.admin?.crashes ?? 0),
      produceSeconds,
      settleSeconds,
      totalSeconds: elapsed(),
      deadLetters,
      pipelines,
      logs: OUT,
      ok: false,
    };
  } finally {
    // The chaos stops before the cleanup: no replica or broker may be started again after it.
    await Promise.all(stoppers.map((stop) => stop().catch(() => undefined)));
    const failed = report === undefined || problems(report).length > 0;
    await chaos.stop(failed).catch((error: Error) => log(`cleanup: ${error.message}`));
  }
  const { markdown, ok } = writeReport(report, OUT);
  console.log(markdown);
  if (!ok) process.exitCode = 1;
}

main().catch((error: Error) => {
  log(error.stack ?? error.message);
  process.exit(1);
});
