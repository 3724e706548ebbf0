// The replica's stats producer: connected during start-up, it publishes the replica's view of
// each pipeline every stats interval and once more at stop (stats-reporter.ts has the records).
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';

import { KeyPartitioner } from '@sluice/kafka';

import type { ActivePipeline } from '../pipelines/active-pipeline';
import type { ParkedPipeline } from '../pipelines/definition-applier';
import { publishStats } from './stats-reporter';

export interface ReplicaStatsView {
  pipelines(): readonly ActivePipeline[];
  /** The pipelines parked or held on this replica, with their errors. */
  failures(): readonly ParkedPipeline[];
  /** The pipeline's consumer lag in the source partitions this replica owns. */
  lagOf(pipeline: ActivePipeline): number;
}

export class StatsPublisher {
  private producer: Producer | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly processorId: string,
    private readonly view: ReplicaStatsView,
    private readonly logger: Logger,
  ) {}

  async connect(): Promise<void> {
    // Stats records are overwritten every few seconds: a plain producer is enough.
    this.producer = this.kafka.producer({ createPartitioner: KeyPartitioner });
    await this.producer.connect();
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    await producer?.disconnect().catch(() => undefined);
  }

  /** Publishes once; a failure is logged, the next interval tries again. */
  async publish(): Promise<void> {
    if (!this.producer) return;
    const { view } = this;
    try {
      await publishStats(
        this.producer,
        this.topic,
        this.processorId,
        view.pipelines(),
        view.failures(),
        (pipeline) => view.lagOf(pipeline),
      );
    } catch (error) {
      this.logger.warn({ err: error }, 'publishing stats failed');
    }
  }
}
