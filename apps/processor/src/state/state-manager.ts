// A stateful partition's state in Kafka (docs/design.md §5): every change is mirrored to the same
// partition of the pipeline's compacted changelog, tagged with the state epoch, and a new owner
// restores exactly that partition. The restore reads to an end it has checked: after the task
// fenced its transactional id (the only writer of the partition), the last stable offset must
// reach the high watermark; until it does a transaction is still open there, and the restore
// waits with that reason rather than rebuild a prefix of the state.
import type { Admin, Kafka, Message } from 'kafkajs';
import type { Logger } from 'pino';

import { readTopicToEnd, untilStableEnd } from '@sluice/kafka';
import type { StateEntry } from '@sluice/operators';

import type { ProcessorMetrics } from '../observability/processor-metrics';
import { changelogDecoder, encodeChangelogValue, upstreamKey } from './changelog-records';

export interface RestoreTarget {
  /**
   * State entries of the epoch restored, in log order, a batch at a time; each value is the
   * entry's JSON text (JsonText) or `null`.
   */
  state(entries: StateEntry[]): void;
  /** An upstream's announced event time (`undefined`: none of this epoch). */
  upstream(upstream: string, time: number | undefined): void;
}

export interface RestoreSummary {
  records: number;
  ms: number;
}

export class StateManager {
  constructor(
    private readonly kafka: Kafka,
    private readonly admin: Admin,
    readonly changelog: string,
    readonly partition: number,
    private readonly logger: Logger,
    private readonly metrics: ProcessorMetrics,
    /** The replica's CONSUMER_GROUP, which a restore's scratch group is under. */
    private readonly groupOwner: string,
  ) {}

  /** Reads this partition's changelog of `epoch` into `target`, up to its checked stable end. */
  async restore(pipelineId: string, epoch: string, target: RestoreTarget): Promise<RestoreSummary> {
    const started = process.hrtime.bigint();
    const end = await untilStableEnd(this.admin, this.changelog, this.partition, (error, attempt) =>
      this.logger.info(
        { reason: error.message, attempt },
        'waiting for an open transaction on the changelog to end before restoring',
      ),
    );
    // Applied in log order as it is read, a batch at a time: no copy of the whole changelog.
    let entries: StateEntry[] = [];
    const decode = changelogDecoder(epoch);
    const records = await readTopicToEnd(
      this.kafka,
      this.changelog,
      (record) => {
        if (record.key === null) return;
        const entry = decode(record.key, record.value);
        if (entry.kind === 'state') entries.push(entry);
        else target.upstream(entry.upstream, entry.time);
      },
      {
        groupOwner: this.groupOwner,
        partitions: [this.partition],
        ends: new Map([[this.partition, end]]),
        onBatch: async () => {
          target.state(entries);
          entries = [];
        },
      },
    );
    target.state(entries);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.metrics.restoreSeconds.observe({ pipeline: pipelineId }, seconds);
    this.metrics.restoredRecords.inc({ pipeline: pipelineId }, records);
    return { records, ms: Math.round(seconds * 1000) };
  }

  /** The changelog records of state changes and of upstream event times, in this epoch. */
  changes(
    epoch: string,
    entries: Iterable<StateEntry>,
    upstreams: Iterable<[string, number | undefined]>,
  ): Message[] {
    const messages: Message[] = [];
    const partition = this.partition;
    for (const entry of entries)
      messages.push({ partition, key: entry.key, value: encodeChangelogValue(epoch, entry.value) });
    for (const [upstream, time] of upstreams) {
      messages.push({
        partition,
        key: upstreamKey(upstream),
        value: encodeChangelogValue(epoch, { t: time }),
      });
    }
    return messages;
  }

  /** Tombstones for an old epoch's keys, so compaction drops them. */
  tombstones(entries: Iterable<StateEntry>): Message[] {
    const messages: Message[] = [];
    for (const entry of entries)
      messages.push({ partition: this.partition, key: entry.key, value: null });
    return messages;
  }
}
