// DESIGN §1: a source record is decoded once; one that is not a valid event goes to the
// dead-letter topic unchanged (same key and value bytes), with the reason and its coordinates in
// headers. Decoding never throws, so a bad record can never stop a partition.
import { isUtf8 } from 'node:buffer';

import { decodeEvent, DLQ_HEADERS } from '@sluice/contracts';
import type { SluiceEvent } from '@sluice/contracts';

export interface SourceRecord {
  topic: string;
  partition: number;
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

export function decodeRecord(record: SourceRecord): DecodedRecord {
  const recordTime = Number(record.timestamp);
  // Node's native UTF-8 check and decoder are several times faster than a fatal TextDecoder.
  const text =
    record.value !== null && isUtf8(record.value) ? record.value.toString('utf8') : undefined;
  const decoded =
    record.value === null
      ? decodeEvent(null)
      : text === undefined
        ? ({ ok: false, reason: 'the record value is not valid UTF-8' } as const)
        : decodeEvent(text, Number.isFinite(recordTime) ? recordTime : undefined);
  if (decoded.ok) return { ok: true, event: decoded.event, text: text! };
  return {
    ok: false,
    deadLetter: {
      key: record.key,
      value: record.value,
      headers: {
        [DLQ_HEADERS.error]: decoded.reason,
        [DLQ_HEADERS.sourceTopic]: record.topic,
        [DLQ_HEADERS.sourcePartition]: String(record.partition),
        [DLQ_HEADERS.sourceOffset]: record.offset,
      },
    },
  };
}
