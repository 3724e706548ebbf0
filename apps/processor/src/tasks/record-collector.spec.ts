import fc from 'fast-check';
import type { Message } from 'kafkajs';

import { keyPartition } from '@sluice/kafka';

import { RecordCollector } from './record-collector';
import type { DrainOptions } from './record-collector';

describe('RecordCollector', () => {
  it('drains nothing when nothing was added', () => {
    expect(new RecordCollector().drain()).toEqual([]);
  });

  it('takes all of another collector behind its own records, per topic in order', () => {
    const topic = fc.constantFrom('out', 'late', 'sluice.p.changelog');
    const records = fc.array(fc.record({ topic, value: fc.string({ maxLength: 20 }) }), {
      maxLength: 50,
    });
    fc.assert(
      fc.property(records, records, (first, second) => {
        const collector = RecordCollector.of(
          ...first.map(({ topic, value }) => ({ topic, messages: [{ value }] })),
        );
        const other = RecordCollector.of(
          ...second.map(({ topic, value }) => ({ topic, messages: [{ value }] })),
        );
        collector.takeAll(other);
        expect(other.isEmpty).toBe(true);
        expect(other.size).toBe(0);
        // What it took is its own: the other collector, filled again, leaves it as it is.
        other.add('out', { value: 'added to the other one afterwards' });
        expect(collector.size).toBe(first.length + second.length);
        const drained = collector.drain({ requestBytes: Infinity, partitionBytes: Infinity });
        const values = (of: string) =>
          drained.flat().flatMap((t) => (t.topic === of ? t.messages.map((m) => m.value) : []));
        for (const name of ['out', 'late', 'sluice.p.changelog'])
          expect(values(name)).toEqual(
            [...first, ...second].filter((r) => r.topic === name).map((r) => r.value),
          );
      }),
    );
  });

  it('keeps every record, in order per topic, in requests under the size bound', () => {
    const message = fc.record({
      topic: fc.constantFrom('out', 'late', 'sluice.p.changelog'),
      value: fc.string({ maxLength: 300 }),
    });
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 200 }),
        fc.integer({ min: 200, max: 5000 }),
        (messages, bound) => {
          const collector = new RecordCollector();
          for (const { topic, value } of messages) collector.add(topic, { key: null, value });
          const requests = collector.drain({ requestBytes: bound, partitionBytes: bound });
          expect(collector.isEmpty).toBe(true);
          const sent = new Map<string, unknown[]>();
          for (const request of requests) {
            const bytes = request
              .flatMap((t) => t.messages)
              .reduce((sum, m) => sum + String(m.value).length + 64, 0);
            // A request over the bound holds one record only (a record is never split).
            if (bytes > bound) expect(request.flatMap((t) => t.messages)).toHaveLength(1);
            for (const { topic, messages: batch } of request) {
              expect(batch.length).toBeGreaterThan(0);
              sent.set(topic, [...(sent.get(topic) ?? []), ...batch.map((m) => m.value)]);
            }
          }
          for (const topic of new Set(messages.map((m) => m.topic))) {
            expect(sent.get(topic)).toEqual(
              messages.filter((m) => m.topic === topic).map((m) => m.value),
            );
          }
        },
      ),
    );
  });

  const sizeOf = (m: Message) => String(m.key ?? '').length + String(m.value).length + 64;

  it('keeps each partition of a request under its bound, measured where kafkajs places each record', () => {
    const counts: Record<string, number> = { out: 6, late: 1, 'sluice.p.changelog': 3 };
    const message = fc.record({
      topic: fc.constantFrom('out', 'late', 'sluice.p.changelog', 'unknown'),
      key: fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { nil: null }),
      // A record may name its partition (kafkajs then places it there): one the topic lacks
      // could go anywhere, as a keyless one.
      partition: fc.option(fc.integer({ min: 0, max: 7 }), { nil: undefined }),
      value: fc.string({ maxLength: 300 }),
    });
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 300 }),
        fc.integer({ min: 200, max: 5000 }),
        fc.integer({ min: 1, max: 4 }),
        (messages, partitionBytes, times) => {
          const options: DrainOptions = {
            partitionsOf: (topic) => counts[topic],
            partitionBytes,
            requestBytes: partitionBytes * times,
          };
          const collector = new RecordCollector();
          for (const { topic, key, partition, value } of messages)
            collector.add(topic, { key, value, ...(partition !== undefined && { partition }) });
          const requests = collector.drain(options);
          const sent = new Map<string, unknown[]>();
          for (const request of requests) {
            const all = request.flatMap((t) => t.messages);
            const bytes = all.reduce((sum, m) => sum + sizeOf(m), 0);
            // Per topic: its fullest partition, plus its keyless records (any may take them all).
            for (const { topic, messages: batch } of request) {
              const placed = new Map<number, number>();
              let keyless = 0;
              const count = counts[topic] ?? 1;
              for (const m of batch) {
                const p =
                  m.partition !== undefined
                    ? m.partition
                    : m.key === null
                      ? undefined
                      : keyPartition(String(m.key), count);
                if (p === undefined || p >= count) keyless += sizeOf(m);
                else placed.set(p, (placed.get(p) ?? 0) + sizeOf(m));
              }
              if (Math.max(0, ...placed.values()) + keyless > partitionBytes)
                expect(all).toHaveLength(1);
            }
            if (bytes > options.requestBytes!) expect(all).toHaveLength(1);
            for (const { topic, messages: batch } of request)
              sent.set(topic, [...(sent.get(topic) ?? []), ...batch.map((m) => m.value)]);
          }
          for (const topic of new Set(messages.map((m) => m.topic)))
            expect(sent.get(topic)).toEqual(
              messages.filter((m) => m.topic === topic).map((m) => m.value),
            );
        },
      ),
    );
  });

  it('fills a request across partitions where it knows them, and per topic where it does not', () => {
    const add = (collector: RecordCollector) => {
      for (let i = 0; i < 600; i++)
        collector.add('out', { key: `k${i}`, value: 'x'.repeat(1000 - 64 - String(i).length - 1) });
    };
    const known = new RecordCollector();
    add(known);
    const unknown = new RecordCollector();
    add(unknown);
    const limits = { partitionBytes: 100_000, requestBytes: 400_000 };
    // 600,000 bytes over 6 partitions: two requests of about 400,000 and 200,000.
    expect(known.drain({ ...limits, partitionsOf: () => 6 })).toHaveLength(2);
    // Without the partition count, each request holds what one partition could take.
    expect(unknown.drain(limits)).toHaveLength(6);
  });
});
