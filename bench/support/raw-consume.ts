// The ceiling of the client: a kafkajs consumer group reading every record of a topic and doing
// nothing with it (or, with --parse, only JSON.parse of each value), read_committed like Sluice,
// in a process of its own like a replica. It runs the workspace's kafkajs (2.2.4 with
// patches/kafkajs+2.2.4.patch, as Sluice runs it), or the copy that SLUICE_BENCH_KAFKAJS names
// (kafkajs 2.2.4 as published, installed apart by the bench). Prints one JSON line:
// { count, bytes, ms }.
import { parseArgs } from 'node:util';

import type * as Kafkajs from 'kafkajs';

type KafkajsModule = typeof Kafkajs;

const { values: args } = parseArgs({
  options: {
    topic: { type: 'string' },
    group: { type: 'string' },
    expected: { type: 'string' },
    parse: { type: 'boolean', default: false },
  },
});

async function main(): Promise<void> {
  const { Kafka, logLevel } = (await import(
    process.env['SLUICE_BENCH_KAFKAJS'] ?? 'kafkajs'
  )) as KafkajsModule;
  const kafka = new Kafka({
    clientId: 'sluice-bench-raw',
    // Not @sluice/kafka: it would load the workspace's kafkajs beside the one chosen here.
    brokers: (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','),
    logLevel: logLevel.NOTHING,
  });
  const expected = Number(args.expected);
  const consumer = kafka.consumer({ groupId: args.group!, maxWaitTimeInMs: 100 });
  let count = 0;
  let bytes = 0;
  let parsed = 0;
  let first = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  await consumer.connect();
  await consumer.subscribe({ topic: args.topic!, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      if (first === 0) first = Date.now();
      for (const message of batch.messages) {
        bytes += message.value?.length ?? 0;
        if (args.parse && message.value)
          parsed += (JSON.parse(message.value.toString()) as object) ? 1 : 0;
      }
      count += batch.messages.length;
      if (count >= expected) done();
    },
  });
  await finished;
  const ms = Date.now() - first;
  await consumer.disconnect();
  process.stdout.write(`${JSON.stringify({ count, bytes, parsed, ms })}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
