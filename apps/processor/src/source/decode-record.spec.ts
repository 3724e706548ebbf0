import fc from 'fast-check';

import { decodeRecord, MAX_EVENT_BYTES } from './decode-record';
const decode = (value: Buffer | null, timestamp = '1764410400000') =>
  decodeRecord('events', 3, { offset: '1234', key: Buffer.from('order-42'), value, timestamp });

describe('decodeRecord', () => {
  it('decodes a valid event, taking the record timestamp when the event has none', () => {
    const text = JSON.stringify({ event_type: 'a', payload: { x: 1 } });
    const result = decode(Buffer.from(text));
    expect(result).toEqual({
      ok: true,
      event: { envelope: { event_type: 'a', payload: { x: 1 } }, time: 1764410400000 },
      text,
    });
  });

  it('dead-letters an event too large to repartition', () => {
    const payload = { blob: 'x'.repeat(MAX_EVENT_BYTES) };
    const value = Buffer.from(JSON.stringify({ event_type: 'a', payload }));
    expect(decode(value)).toMatchObject({
      ok: false,
      deadLetter: { value, headers: { 'sluice-error': expect.stringContaining('bytes; at most') } },
    });
  });

  it('dead-letters invalid UTF-8 (an overlong encoding and a lone continuation byte)', () => {
    for (const bytes of [[0x7b, 0xc0, 0xaf, 0x7d], [0x80], [0xed, 0xa0, 0x80]]) {
      const result = decode(Buffer.from(bytes));
      expect(result).toMatchObject({
        ok: false,
        deadLetter: { headers: { 'sluice-error': 'the record value is not valid UTF-8' } },
      });
    }
  });

  it('dead-letters a bad record unchanged, with the reason and source coordinates', () => {
    const value = Buffer.from('{"event_type": "a"}');
    const result = decode(value);
    expect(result).toEqual({
      ok: false,
      deadLetter: {
        key: Buffer.from('order-42'),
        value,
        headers: {
          'sluice-error': 'payload is missing or not a JSON object',
          'sluice-source-topic': 'events',
          'sluice-source-partition': '3',
          'sluice-source-offset': '1234',
        },
      },
    });
  });

  it('never throws and dead-letters every value that is not an event, keeping its bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const value = Buffer.from(bytes);
        const result = decode(value);
        if (!result.ok) {
          expect(result.deadLetter.value).toBe(value);
          expect(result.deadLetter.headers['sluice-error']!.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
    expect(decode(null)).toMatchObject({
      ok: false,
      deadLetter: { headers: { 'sluice-error': 'the record has no value' } },
    });
  });
});
