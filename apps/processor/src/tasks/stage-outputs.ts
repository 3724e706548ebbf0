// Where a hosted stage's output goes (docs/design.md §3): results to its node's sink, late events
// to the sink's `.late` topic, and records a join refuses to the dead-letter topic, each under
// the pipeline's definition at the time it is sent (sinks may move without a new epoch).
import type { Message } from 'kafkajs';

import { DLQ_HEADERS } from '@sluice/contracts';
import type { EventEnvelope } from '@sluice/contracts';
import type { LateRecord, StageEmitter } from '@sluice/operators';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import { resultValue } from '../pipelines/result-value';

/** Stands in for the event until it turns out to be late (then it is parsed). */
export const NOT_PARSED = Object.freeze({ event_type: '', payload: {} });

export interface StageOutputsTarget {
  send(topic: string, message: Message): void;
  /** The pipeline's definition now (`undefined`: deleted, nothing goes out). */
  pipeline(): ActivePipeline | undefined;
  /** The JSON of the record in hand: a late one's event is parsed from it. */
  currentEventJson(): string;
  dlqTopic: string;
  pipelineId: string;
  /** The repartition partition, named in a dead letter's headers. */
  topic: string;
  partition: number;
}

export function stageOutputs(nodeId: string, target: StageOutputsTarget): StageEmitter {
  const placedNow = () => {
    const pipeline = target.pipeline();
    const placed = pipeline?.stateful.find((node) => node.node.id === nodeId);
    return placed?.sink && { sink: placed.sink, suffix: pipeline!.epochSuffix };
  };
  return {
    result: (key, record) => {
      const to = placedNow();
      if (to) target.send(to.sink.topic, { key, value: resultValue(record, to.suffix) });
    },
    late: (key, record) => {
      const to = placedNow();
      if (!to) return;
      // A late event's payload is parsed only now; a late partial carries its own summary.
      if (record.event === NOT_PARSED)
        record.event = JSON.parse(target.currentEventJson()) as LateRecord['event'];
      target.send(to.sink.late, { key, value: resultValue(record, to.suffix) });
    },
    // A record waits for the watermark, so a join refuses it while another is in hand: its
    // repartition offset names it.
    refused: (refusal: { reason: string; event: EventEnvelope; key: string; id: string }) => {
      target.send(target.dlqTopic, {
        key: refusal.key,
        value: JSON.stringify(refusal.event),
        headers: {
          [DLQ_HEADERS.error]: refusal.reason,
          [DLQ_HEADERS.pipelineId]: target.pipelineId,
          [DLQ_HEADERS.sourceTopic]: target.topic,
          [DLQ_HEADERS.sourcePartition]: String(target.partition),
          [DLQ_HEADERS.sourceOffset]: refusal.id,
        },
      });
    },
  };
}
