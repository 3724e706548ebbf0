import { performance } from 'node:perf_hooks';

import { createKafka, ensureTopics, onTopics } from '@sluice/kafka';
import type { KafkaSecurity } from '@sluice/kafka';
import { SingleBar } from 'cli-progress';
import { logLevel, Partitioners } from 'kafkajs';
import type { Message } from 'kafkajs';

import { CliError, kafkaFailure } from '../errors';
import { countLines, readJsonLines } from '../io/jsonl';
import type { Printer } from '../output/printer';
import { count } from '../output/printer';

export interface ProduceOptions {
  brokers: string[];
  /** TLS and SASL (environment.ts' kafkaSecurity). */
  security: KafkaSecurity;
  topic: string;
  /** Top-level field whose value keys each record (docs/design.md §1: events are keyed by entity). */
  keyField: string;
  batchSize: number;
  progress: boolean;
  /** Partitions and cleanup policy of the topic when it has to be created. */
  partitions: number;
  compact: boolean;
}

/**
 * Produces a JSONL file, one record per line, keyed by a field of each line, with an idempotent
 * producer (no duplicates on retries) and a progress bar with the rate.
 */
export async function runProduce(
  path: string,
  options: ProduceOptions,
  out: Printer,
): Promise<number> {
  const total = countLines(path);
  const kafka = createKafka({
    clientId: 'sluice-cli',
    brokers: options.brokers,
    security: options.security,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const admin = kafka.admin();
  const asked = {
    topic: onTopics('Write and Describe (and Create, if it may be missing)', [options.topic]),
  };
  try {
    await admin.connect();
    const created = await ensureTopics(admin, [
      { topic: options.topic, numPartitions: options.partitions, compacted: options.compact },
    ]);
    if (created.length > 0) {
      out.line(
        `created topic ${options.topic} (${options.partitions} partitions${options.compact ? ', compacted' : ''})`,
      );
    }
    await producer.connect();
  } catch (error) {
    throw kafkaFailure(error, options.brokers, asked);
  } finally {
    await admin.disconnect();
  }
  const bar = options.progress
    ? new SingleBar({
        format: `producing to ${options.topic} [{bar}] {percentage}% | {value}/{total} | {rate}/s | eta {eta_formatted}`,
        hideCursor: true,
      })
    : undefined;
  bar?.start(total, 0, { rate: 0 });
  const started = performance.now();
  let produced = 0;
  let batch: Message[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await producer
      .send({ topic: options.topic, acks: -1, messages: batch })
      .catch((error: unknown) => {
        throw kafkaFailure(error, options.brokers, asked);
      });
    produced += batch.length;
    batch = [];
    const seconds = (performance.now() - started) / 1000;
    bar?.update(produced, { rate: count(produced / Math.max(seconds, 0.001)) });
  };
  try {
    for await (const { line, value } of readJsonLines(path)) {
      batch.push({
        key: keyOf(value, options.keyField, `${path}:${line}`),
        value: JSON.stringify(value),
      });
      if (batch.length >= options.batchSize) await flush();
    }
    await flush();
  } finally {
    bar?.stop();
    await producer.disconnect();
  }
  const seconds = (performance.now() - started) / 1000;
  out.line(
    `produced ${count(produced)} records to ${options.topic} in ${seconds.toFixed(1)} s (${count(produced / Math.max(seconds, 0.001))}/s)`,
  );
  return produced;
}

function keyOf(value: unknown, field: string, where: string): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(`${where}: a record must be a JSON object`);
  }
  const key = (value as Record<string, unknown>)[field];
  if (key === undefined || key === null) return null;
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'boolean') return String(key);
  throw new CliError(`${where}: the key field "${field}" must be a string or a number`);
}
