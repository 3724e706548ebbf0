import fc from 'fast-check';

import { RecordCollector } from './record-collector';

describe('RecordCollector', () => {
  it('drains nothing when nothing was added', () => {
    expect(new RecordCollector().drain()).toEqual([]);
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
          const requests = collector.drain(bound);
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
});
