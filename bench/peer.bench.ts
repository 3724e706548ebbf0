// npm run bench:peer [-- --events 2000000]
// Sluice beside Kafka Streams on the same work: the daily-revenue pipeline over the same
// pre-produced 6-partition topic on the same broker, one instance each (one replica, one stream
// thread), exactly-once both, one after the other. Each rate runs from the system's first record
// to the moment its consumer group has committed every source and repartition record. The two
// systems' results are compared with each other and with the reference run.
// The end-of-input ticks are produced once Kafka Streams has committed every order (see below);
// Sluice then reads the very same topic, ticks included.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import { canonicalJson, internalTopics, repartitionTopic } from '@sluice/contracts';
import type { EventEnvelope } from '@sluice/contracts';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { runReference } from '@sluice/operators';
import { dailyRevenueDefinition } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';
import { logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';

import {
  consumedBy,
  DAY,
  definitionOf,
  fmt,
  log,
  PARTITIONS,
  produceOrders,
  produceTicks,
  putPipeline,
  rate,
  readRecords,
  startReplica,
  stopProcess,
} from './support/kafka-bench';
import { buildPeer, startPeer, untilCommitted } from './support/kafka-streams-peer';

const { values: args } = parseArgs({
  options: { events: { type: 'string', default: '2000000' } },
});
const N = Number(args.events);
const BROKERS = process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092';

/**
 * Kafka Streams' grace period. Its stream time after a repartition is the largest timestamp any
 * source task has sent, and one task runs ahead of the others by up to a day of this input's
 * event time; records behind by more than the grace would be dropped as expired (Sluice's
 * watermark is the minimum over its upstreams, so it needs none).
 */
const GRACE_MS = 3 * DAY;

const kafka = createKafka({ clientId: 'sluice-bench-peer', logLevel: logLevel.NOTHING });
const prefix = `peer-${randomUUID().slice(0, 8)}`;
const topics = internalTopics(prefix);
const source = `${prefix}.events`;

interface Run {
  rate: number;
  results: string[];
}

async function kafkaStreamsRun(
  admin: Admin,
  pipelineId: string,
  end: number,
  ticks: EventEnvelope[],
): Promise<Run> {
  const applicationId = `${prefix}.kafka-streams`;
  const output = `${prefix}.kafka-streams.daily_revenue`;
  await ensureTopics(admin, [{ topic: output, numPartitions: PARTITIONS }]);
  const peer = startPeer('DailyRevenue', {
    KAFKA_BROKERS: BROKERS,
    APPLICATION_ID: applicationId,
    SOURCE_TOPIC: source,
    OUTPUT_TOPIC: output,
    PIPELINE_ID: pipelineId,
    GRACE_MS: String(GRACE_MS),
  });
  const child = peer.child;
  try {
    while (peer.firstRecordAt() === 0) {
      if (child.exitCode !== null) throw new Error(`the peer exited with ${child.exitCode}`);
      await sleep(20);
    }
    // Stream time after a repartition is the largest timestamp seen from any source task, so an
    // end-of-input tick from a source partition that finished first would expire the windows the
    // others are still filling. Ticks go in once every order is committed (a pause of one poll).
    await untilCommitted(admin, 'kafka streams', applicationId, () => [source]);
    ticks.push(...(await produceTicks(kafka, source, end)));
    const repartition = `${applicationId}-by-currency-repartition`;
    const done = await untilCommitted(admin, 'kafka streams', applicationId, () => [
      source,
      repartition,
    ]);
    return {
      rate: rate(N + PARTITIONS, done - peer.firstRecordAt()),
      results: await readRecords(kafka, output),
    };
  } finally {
    await stopProcess(child);
  }
}

async function sluiceRun(admin: Admin, pipelineId: string): Promise<Run> {
  const definition = definitionOf(
    dailyRevenueDefinition({ id: pipelineId, output: `${prefix}.sluice.daily_revenue` }),
  );
  const group = `${prefix}.processor`;
  await putPipeline(kafka, topics.pipelines, definition, group);
  const replica = startReplica({ id: 'peer-bench-0', prefix, group });
  try {
    while ((await consumedBy(replica)) === 0) {
      if (replica.child.exitCode !== null) throw new Error('the replica exited');
      await sleep(20);
    }
    const started = Date.now();
    const watched = [source, repartitionTopic(definition.id, prefix)];
    const done = await untilCommitted(admin, 'sluice', group, () => watched);
    return {
      rate: rate(N + PARTITIONS, done - started),
      results: await readRecords(kafka, definition.output),
    };
  } finally {
    await stopProcess(replica.child);
  }
}

async function main(): Promise<void> {
  buildPeer();
  log(`prefix ${prefix}`);
  const { orders, start } = await produceOrders(
    kafka,
    { source, pipelines: topics.pipelines },
    N,
    5,
  );
  const admin = kafka.admin();
  await admin.connect();
  const ticks: EventEnvelope[] = [];
  const pipelineId = randomUUID();

  log('Kafka Streams, one instance, one stream thread, exactly_once_v2');
  const peer = await kafkaStreamsRun(
    admin,
    pipelineId,
    start + 10 * DAY + GRACE_MS + 2 * DAY,
    ticks,
  );
  log('Sluice, one replica, exactly-once');
  const sluice = await sluiceRun(admin, pipelineId);
  await admin.disconnect();

  const reference = runReference(definitionOf(dailyRevenueDefinition({ id: pipelineId })), [
    ...orders,
    ...ticks,
  ]);
  const expected = reference.results.map((r) => canonicalJson([r.key, r.value])).sort();
  const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);

  console.log(`\npeer benchmark: ${fmt(N)} orders, daily revenue, node ${process.version}`);
  console.log(`kafka streams 4.4.0 (exactly_once_v2): ${fmt(peer.rate).padStart(9)} events/s`);
  console.log(`sluice (exactly-once):                 ${fmt(sluice.rate).padStart(9)} events/s`);
  console.log(`ratio sluice / kafka streams:          ${(sluice.rate / peer.rate).toFixed(2)}`);
  console.log(
    `results: kafka streams ${peer.results.length}, sluice ${sluice.results.length}, reference ${expected.length}; ` +
      `kafka streams = sluice: ${same(peer.results, sluice.results) ? 'yes' : 'NO'}, ` +
      `both = reference: ${same(peer.results, expected) && same(sluice.results, expected) ? 'yes' : 'NO'}`,
  );
  if (!same(peer.results, sluice.results) || !same(sluice.results, expected)) process.exitCode = 1;
}

main().catch((error: Error) => {
  log(error.stack ?? error.message);
  process.exit(1);
});
