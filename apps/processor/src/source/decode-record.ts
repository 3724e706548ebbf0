// docs/design.md §1: a source record is decoded once; one that is not a valid event goes to the
// dead-letter topic unchanged (same key and value bytes), with the reason and its coordinates in
// headers. Decoding never throws, so a bad record can never stop a partition.
import { isUtf8 } from 'node:buffer';

import { decodeEvent, DLQ_HEADERS } from '@sluice/contracts';
import type { SluiceEvent } from '@sluice/contracts';

/** A consumed record as kafkajs hands it over. */
export interface SourceMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  /** The Kafka record timestamp, epoch ms as a string (kafkajs' form). */
  timestamp: string;
}

export interface DeadLetterMessage {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

export type DecodedRecord =
  { ok: true; event: SluiceEvent; text: string } | { ok: false; deadLetter: DeadLetterMessage };

/**
 * Larger events are dead-lettered: re-keyed with their group they would exceed what the broker
 * takes in one record (1 MiB by default) and stop the partition.
 */
export const MAX_EVENT_BYTES = 512 * 1024;

export function decodeRecord(
  topic: string,
  partition: number,
  record: SourceMessage,
): DecodedRecord {
  if (record.value !== null && record.value.length > MAX_EVENT_BYTES) {
    const reason = `the event is ${record.value.length} bytes; at most ${MAX_EVENT_BYTES} are processed`;
    return deadLettered(topic, partition, record, reason);
  }
  const recordTime = Number(record.timestamp);
  // Node's native UTF-8 check, then its decoder's fast path: toString() without an encoding
  // argument costs a third of toString('utf8') (bench/operators.bench.ts, raw JSON).
  const text = record.value !== null && isUtf8(record.value) ? record.value.toString() : undefined;
  const decoded =
    record.value === null
      ? decodeEvent(null)
      : text === undefined
        ? ({ ok: false, reason: 'the record value is not valid UTF-8' } as const)
        : decodeEvent(text, Number.isFinite(recordTime) ? recordTime : undefined);
  if (decoded.ok) return { ok: true, event: decoded.event, text: text! };
  return deadLettered(topic, partition, record, decoded.reason);
}

function deadLettered(
  topic: string,
  partition: number,
  record: SourceMessage,
  reason: string,
): DecodedRecord {
  return {
    ok: false,
    deadLetter: {
      key: record.key,
      value: record.value,
      headers: {
        [DLQ_HEADERS.error]: reason,
        [DLQ_HEADERS.sourceTopic]: topic,
        [DLQ_HEADERS.sourcePartition]: String(partition),
        [DLQ_HEADERS.sourceOffset]: record.offset,
      },
    },
  };
}
