import type { StoredPipeline } from '@sluice/contracts';

import { startPoint } from './start-point';

const stored = (extra: Partial<StoredPipeline> = {}) =>
  ({
    id: '00000000-0000-4000-8000-000000000001',
    name: 'orders-by-tier',
    description: null,
    enabled: true,
    sources: [
      { id: 'orders', topic: 'orders', event_types: [], start: 'latest' },
      { id: 'customers', topic: 'customers', event_types: [], start: 'earliest', as: 'table' },
    ],
    transforms: [],
    sinks: [],
    version: 1,
    reset_generation: 0,
    created_at: '2026-11-01T00:00:00.000Z',
    updated_at: '2026-11-01T00:00:00.000Z',
    ...extra,
  }) as unknown as StoredPipeline;

describe('startPoint', () => {
  it('starts a stream at its start and a table at the beginning', () => {
    expect(startPoint(stored(), 'orders')).toBe(Date.parse('2026-11-01T00:00:00.000Z'));
    expect(startPoint(stored(), 'customers')).toBe('earliest');
  });

  it('replays streams from the replay’s time, but reads a table from its beginning still', () => {
    const replay = stored({ replay_generation: 1, replay_from: '2026-11-20T00:00:00Z' });
    expect(startPoint(replay, 'orders')).toBe(Date.parse('2026-11-20T00:00:00Z'));
    expect(startPoint(replay, 'customers')).toBe('earliest');
  });
});
