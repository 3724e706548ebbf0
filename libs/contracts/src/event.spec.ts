import fc from 'fast-check';

import { decodeEvent, MAX_TIME, MIN_TIME, parseIsoTimestamp, toEvent } from './event';

const valid = {
  id: '1b9d',
  event_type: 'order.placed',
  entity_id: 'order-42',
  timestamp: '2026-11-29T10:00:00.000Z',
  payload: { status: 'paid', total: 12.5 },
  metadata: { source: 'web' },
};

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('decodeEvent', () => {
  it('decodes a valid envelope and its event time', () => {
    const result = decodeEvent(bytes(valid));
    expect(result).toEqual({
      ok: true,
      event: { envelope: valid, time: Date.parse(valid.timestamp) },
    });
  });

  it('accepts epoch milliseconds and falls back to the record timestamp', () => {
    const epoch = decodeEvent(bytes({ ...valid, timestamp: 1764410400000 }));
    expect(epoch.ok && epoch.event.time).toBe(1764410400000);
    const { timestamp: _omit, ...untimed } = valid;
    const fallback = decodeEvent(bytes(untimed), 1700000000000);
    expect(fallback.ok && fallback.event.time).toBe(1700000000000);
  });

  it.each([
    [null, 'the record has no value'],
    [new Uint8Array([0xff, 0xfe, 0x00]), 'not valid UTF-8'],
    ['{"event_type": ', 'not JSON'],
    ['[1,2]', 'not a JSON object'],
    ['"text"', 'not a JSON object'],
    [JSON.stringify({ payload: {} }), 'event_type is missing'],
    [JSON.stringify({ event_type: 7, payload: {} }), 'event_type is missing'],
    [JSON.stringify({ event_type: 'a' }), 'payload is missing'],
    [JSON.stringify({ event_type: 'a', payload: [1] }), 'payload is missing or not a JSON object'],
    [JSON.stringify({ event_type: 'a', payload: {}, timestamp: 'yesterday' }), 'is not ISO-8601'],
    [
      JSON.stringify({ event_type: 'a', payload: {}, timestamp: '2026-11-29T10:00:00' }),
      'is not ISO-8601',
    ],
    [
      JSON.stringify({ event_type: 'a', payload: {}, timestamp: '2026-02-30T10:00:00Z' }),
      'is not ISO-8601',
    ],
    [
      JSON.stringify({ event_type: 'a', payload: {}, timestamp: '9999-01-01T00:00:00Z' }),
      'outside 1970-01-01',
    ],
    [JSON.stringify({ event_type: 'a', payload: {}, timestamp: -5 }), 'not epoch milliseconds'],
    [JSON.stringify({ event_type: 'a', payload: {}, timestamp: 1.5 }), 'not epoch milliseconds'],
    [JSON.stringify({ event_type: 'a', payload: {}, timestamp: true }), 'ISO-8601 string or epoch'],
    [
      JSON.stringify({ event_type: 'a', payload: {} }),
      'timestamp is missing and the record has no timestamp',
    ],
    [
      JSON.stringify({ event_type: 'a', payload: {}, timestamp: 1, entity_id: 5 }),
      'entity_id must be a string',
    ],
    [
      JSON.stringify({ event_type: 'a', payload: {}, timestamp: 1, metadata: 'x' }),
      'metadata must be a JSON object',
    ],
  ])('rejects %j with a reason', (value, reason) => {
    const result = decodeEvent(value as Uint8Array | string | null);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });

  it('never throws, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
        const result = decodeEvent(data, 0);
        expect(typeof result.ok).toBe('boolean');
      }),
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(typeof toEvent(value, 0).ok).toBe('boolean');
      }),
    );
  });
});

describe('parseIsoTimestamp', () => {
  it('agrees with Date.parse on every instant in range, with and without milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TIME, max: MAX_TIME }), fc.boolean(), (time, millis) => {
        const iso = new Date(time).toISOString();
        const text = millis ? iso : iso.replace(/\.\d{3}Z$/, 'Z');
        expect(parseIsoTimestamp(text)).toBe(Date.parse(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('handles fractions and offsets', () => {
    expect(parseIsoTimestamp('2026-11-29T10:00:00.5Z')).toBe(
      Date.parse('2026-11-29T10:00:00.500Z'),
    );
    expect(parseIsoTimestamp('2026-11-29T10:00:00.123456Z')).toBe(
      Date.parse('2026-11-29T10:00:00.123Z'),
    );
    expect(parseIsoTimestamp('2026-11-29T11:00:00+01:00')).toBe(Date.parse('2026-11-29T10:00:00Z'));
    expect(parseIsoTimestamp('2024-02-29T00:00:00Z')).toBe(Date.parse('2024-02-29T00:00:00Z'));
    for (const bad of [
      '2023-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-29T24:00:00Z',
      '2026-11-29T10:00:00.Z',
      '2026-11-29 10:00:00',
    ]) {
      expect(parseIsoTimestamp(bad)).toBeNaN();
    }
  });
});
