// Tasks driven without a broker, for unit tests: nothing here resumes, fences or commits, so the
// clients are never reached. The protected parts a test calls are listed in SourceDriven and
// StatefulDriven.
import type { Admin, Kafka, Message } from 'kafkajs';
import pino from 'pino';

import { pipelineRun, validateDefinition } from '@sluice/contracts';
import type { PipelineDefinition, PipelineDefinitionInput, StoredFields } from '@sluice/contracts';
import { NO_LOOKUPS, planOfLinear } from '@sluice/operators';
import { dailyRevenueDefinition, orderEvent } from '@sluice/operators/testing';

import { ProcessorMetrics } from '../observability/processor-metrics';
import { activePipeline } from '../pipelines/active-pipeline';
import type { PipelineSet } from '../pipelines/pipeline-set';
import type { InputMessage } from './input-batch';
import { SourceTask } from './source-task';
import { StatefulTask } from './stateful-task';
import type { TaskContext } from './task-context';
import type { CommitIntervals, TaskOutput } from './task-output';
import { TransactionJournal } from './transaction-journal';

export const TOPIC = 'orders';

export type LinearStored = PipelineDefinition & StoredFields;

/** The daily-revenue pipeline number `n` (or another, by `overrides`), as the admin stores it. */
export function stored(n: number, overrides: Partial<PipelineDefinitionInput> = {}): LinearStored {
  const validated = validateDefinition(
    dailyRevenueDefinition({
      id: `00000000-0000-4000-8000-00000000000${n}`,
      output: `out-${n}`,
      ...overrides,
    }),
    { topicPrefix: 'unit' },
  );
  if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
  return {
    ...validated.definition,
    version: 1,
    reset_generation: 0,
    created_at: '2026-11-29T00:00:00.000Z',
    updated_at: '2026-11-29T00:00:00.000Z',
  };
}

/** Over one source partition of TOPIC. */
export const active = (pipeline: LinearStored) =>
  activePipeline(pipeline, planOfLinear(pipeline, [TOPIC]), 'unit', () => 1);

/** An order event at `time`, as the record at `offset`. */
export const order = (offset: number, time: number): InputMessage => ({
  offset: String(offset),
  key: null,
  value: Buffer.from(JSON.stringify(orderEvent(new Date(time).toISOString()))),
  timestamp: String(time),
});

/** What every task kind lets a test drive. */
interface Driven {
  refresh(): void;
  handle(messages: InputMessage[]): void;
  awaitsCommit(): boolean;
  send(topic: string, message: Message): void;
  readonly output: TaskOutput;
}

export interface SourceDriven extends Driven {
  adoptCommitted(metadata: string | undefined, offset: string | undefined): void;
  commitMetadata(offset: string): string | undefined;
  repositionTo(): string | undefined;
  afterBatch(next: string): void;
  beforeCommit(): void;
}

export type StatefulDriven = Driven;

const EVERY_100_MS: CommitIntervals = { commitMs: 100, quietMs: 100 };

function unitContext(intervals: CommitIntervals): TaskContext {
  return {
    kafka: {} as Kafka,
    admin: {} as Admin,
    consumerGroup: 'unit.processor',
    topicPrefix: 'unit',
    logger: pino({ level: 'silent' }),
    metrics: new ProcessorMetrics({
      pipelines: () => [],
      lagByTopic: () => new Map(),
      assignedPartitions: () => 0,
    }),
    commitIntervals: intervals,
  };
}

const memory = () => ({ acknowledged: undefined, journal: new TransactionJournal() });

/**
 * Partition 0 of TOPIC; `known`: the pipelines the registry knows (running here or not);
 * `replicaTransactions`: a stand-in for the replica's (exactly_once_v2).
 */
export function sourceTask(
  pipelines: PipelineSet,
  known: () => LinearStored[],
  intervals = EVERY_100_MS,
  replicaTransactions?: TaskContext['replicaTransactions'],
): SourceDriven {
  const task = new SourceTask(
    TOPIC,
    0,
    {
      ...unitContext(intervals),
      replicaTransactions,
      pipelines,
      dlqTopic: 'unit.dlq',
      lookups: NO_LOOKUPS,
      knownRuns: () => new Set(known().map(pipelineRun)),
    },
    memory(),
  );
  return task as unknown as SourceDriven;
}

/** Partition 0 of the pipeline's repartition topic. */
export function statefulTask(
  pipelines: PipelineSet,
  pipelineId: string,
  intervals = EVERY_100_MS,
): StatefulDriven {
  const context = { ...unitContext(intervals), pipelines, dlqTopic: 'unit.dlq' };
  const task = new StatefulTask('unit.repartition', 0, context, memory(), pipelineId);
  return task as unknown as StatefulDriven;
}
