// (d) of bench:e2e: latency from an event's append to its result's commit, at a steady input
// rate. Events carry the wall-clock time they are sent as their event time, to explicit
// partitions in turn, so that for a window both the event that moved each partition past the
// window's end and the moment of that are known. A read_committed consumer notes when each
// result becomes visible.
import type { EventEnvelope, PipelineDefinition } from '@sluice/contracts';
import { sleep } from '@sluice/testing';
import type { Kafka } from 'kafkajs';

import { fmt, log, PARTITIONS } from './kafka-bench';

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summary(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}

/** Sends `perSecond` events for `seconds`, in 20 ms slices; returns each partition's send log. */
export async function paceEvents(
  kafka: Kafka,
  topic: string,
  perSecond: number,
  seconds: number,
): Promise<Array<Array<{ time: number }>>> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent: Array<Array<{ time: number }>> = Array.from({ length: PARTITIONS }, () => []);
  const sliceMs = 20;
  const perSlice = Math.max(1, Math.round((perSecond * sliceMs) / 1000));
  const started = Date.now();
  let n = 0;
  let lastReport = 0;
  while (Date.now() - started < seconds * 1000) {
    const sliceStart = Date.now();
    const messages = [];
    for (let i = 0; i < perSlice; i++, n++) {
      const time = Date.now();
      const partition = n % PARTITIONS;
      const event: EventEnvelope = {
        event_type: 'latency.probe',
        id: `probe-${n}`,
        timestamp: new Date(time).toISOString(),
        payload: { n, status: 'paid', total: 1, currency: 'gbp' },
      };
      sent[partition]!.push({ time });
      messages.push({ partition, value: JSON.stringify(event) });
    }
    await producer.send({ topic, messages, acks: 1 });
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      log(`  latency probe: ${fmt(n)} events sent`);
    }
    const spent = Date.now() - sliceStart;
    if (spent < sliceMs) await sleep(sliceMs - spent);
  }
  await producer.disconnect();
  return sent;
}

/** Notes when each record of `topic` becomes visible to a read_committed reader. */
export async function watchCommitted(
  kafka: Kafka,
  topic: string,
  group: string,
): Promise<{ seen: Array<{ at: number; value: string }>; stop: () => Promise<void> }> {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 10, readUncommitted: false });
  const seen: Array<{ at: number; value: string }> = [];
  // Results are timed when they arrive: the watcher must have joined its group before any is
  // sent, or the first ones would wait for the join.
  const joined = new Promise<void>((resolve) =>
    consumer.on(consumer.events.GROUP_JOIN, () => resolve()),
  );
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const at = Date.now();
      for (const message of batch.messages)
        seen.push({ at, value: message.value?.toString() ?? '' });
    },
  });
  await joined;
  return { seen, stop: () => consumer.disconnect() };
}

/** Stateless results (the event passed through): visible time − the event's own send time. */
export function statelessLatencies(
  seen: Array<{ at: number; value: string }>,
  sentFrom: number,
): number[] {
  const latencies: number[] = [];
  for (const { at, value } of seen) {
    const time = Date.parse(String((JSON.parse(value) as EventEnvelope).timestamp));
    if (time >= sentFrom) latencies.push(at - time);
  }
  return latencies;
}

/**
 * Final window results: visible time − when the watermark passed the window's end, which is
 * when the last partition was sent its first event at or after the end (lateness 0).
 */
export function windowLatencies(
  seen: Array<{ at: number; value: string }>,
  sent: Array<Array<{ time: number }>>,
  sentFrom: number,
): number[] {
  const passedAt = (end: number) => {
    let latest = -Infinity;
    for (const partition of sent) {
      const first = partition.find((event) => event.time >= end);
      if (!first) return undefined;
      latest = Math.max(latest, first.time);
    }
    return latest;
  };
  const latencies: number[] = [];
  for (const { at, value } of seen) {
    const result = JSON.parse(value) as { final?: boolean; window?: { end: string } };
    if (!result.final || !result.window) continue;
    const end = Date.parse(result.window.end);
    if (end <= sentFrom) continue; // a window of the burst before
    const passed = passedAt(end);
    if (passed !== undefined) latencies.push(at - passed);
  }
  return latencies;
}

/** The probes: a stateless pipeline and a 2 s tumbling window, both over `latency.probe`. */
export function probePipelines(prefix: string, ids: [string, string]): unknown[] {
  const source_event_types = ['latency.probe'];
  return [
    {
      id: ids[0],
      name: 'latency probe: stateless',
      source_event_types,
      operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
      output: `${prefix}.latency-stateless`,
    },
    {
      id: ids[1],
      name: 'latency probe: window',
      source_event_types,
      operators: [
        {
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 2 },
          aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
        },
      ],
      output: `${prefix}.latency-window`,
    },
  ] satisfies Array<Partial<PipelineDefinition>>;
}

/**
 * A Prometheus histogram's quantile `q` from its cumulative buckets (the upper bound of the
 * bucket it falls in, as `histogram_quantile` would at most say), or undefined without samples.
 */
export function histogramQuantile(metrics: string, name: string, q: number): number | undefined {
  const buckets: Array<{ le: number; count: number }> = [];
  for (const match of metrics.matchAll(
    new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`, 'gm'),
  ))
    buckets.push({
      le: match[1] === '+Inf' ? Infinity : Number(match[1]),
      count: Number(match[2]),
    });
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  return buckets.find((bucket) => bucket.count >= q * total)?.le;
}
