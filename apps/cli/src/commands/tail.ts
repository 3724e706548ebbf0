import { createKafka, groupOwner, onTopics, scratchGroupId } from '@sluice/kafka';
import type { KafkaSecurity } from '@sluice/kafka';
import { logLevel } from 'kafkajs';
import type { EachMessagePayload } from 'kafkajs';
import pc from 'picocolors';

import { CliError, kafkaFailure } from '../errors';
import type { Printer } from '../output/printer';

export interface TailOptions {
  brokers: string[];
  /** TLS and SASL (environment.ts' kafkaSecurity). */
  security: KafkaSecurity;
  /** SLUICE_TOPIC_PREFIX: the tail's consumer group is under `<prefix>.cli`. */
  topicPrefix: string;
  fromBeginning: boolean;
  /** Stop after this many records. */
  max: number | undefined;
  /** Stop after this long without a record (ms). */
  idleExitMs: number | undefined;
  json: boolean;
}

/**
 * Prints a topic's records as they are committed (read_committed: an aborted transaction's
 * records never show), until Ctrl-C, `--max` records or `--idle-exit` of silence.
 */
export async function runTail(topic: string, options: TailOptions, out: Printer): Promise<void> {
  const kafka = createKafka({
    clientId: 'sluice-cli',
    brokers: options.brokers,
    security: options.security,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const topics = await admin.listTopics();
    // Kafka lists only the topics the principal may Describe.
    if (!topics.includes(topic))
      throw new CliError(
        `no topic "${topic}" on ${options.brokers.join(',')} (or none this user may Describe)`,
      );
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw kafkaFailure(error, options.brokers, {});
  } finally {
    await admin.disconnect();
  }

  // A group of its own that never commits: tailing must not move anyone's offsets.
  const groupId = scratchGroupId(groupOwner('cli', options.topicPrefix), 'tail');
  const consumer = kafka.consumer({ groupId, readUncommitted: false });
  const asked = {
    group: `Read on group ${groupId} (a prefixed grant on ${groupOwner('cli', options.topicPrefix)}.)`,
    topic: onTopics('Read and Describe', [topic]),
  };
  let seen = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const armIdleTimer = () => {
    if (options.idleExitMs === undefined) return;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(finish, options.idleExitMs);
  };
  const onSignal = () => finish();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  // kafkajs joins after run returns: a refused join (a missing ACL) comes as a crash.
  let failure: CliError | undefined;
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart) return;
    failure = kafkaFailure(payload.error, options.brokers, asked);
    finish();
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: options.fromBeginning });
  await consumer.run({
    autoCommit: false,
    eachMessage: async (payload) => {
      if (options.max !== undefined && seen >= options.max) return;
      seen += 1;
      out.line(formatRecord(payload, options.json));
      if (options.max !== undefined && seen >= options.max) finish();
      else armIdleTimer();
    },
  });
  armIdleTimer();
  await finished;
  clearTimeout(idleTimer);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await consumer.disconnect();
  if (failure) throw failure;
}

export function formatRecord(
  { partition, message }: Pick<EachMessagePayload, 'partition' | 'message'>,
  json: boolean,
): string {
  const key = message.key?.toString('utf8') ?? null;
  const text = message.value?.toString('utf8') ?? null;
  let value: unknown = text;
  try {
    value = text === null ? null : JSON.parse(text);
  } catch {
    // Not JSON (a dead letter's original bytes, say): shown as the text it is.
  }
  if (json) return JSON.stringify({ partition, offset: Number(message.offset), key, value });
  const shown = value === null ? pc.dim('(tombstone)') : JSON.stringify(value);
  return `${pc.dim(`${partition}/${message.offset}`)} ${pc.cyan(key ?? '-')} ${shown}`;
}
