// Definitions and event generators shared by tests, benchmarks and users' own tests.
import type { EventEnvelope, PipelineDefinitionInput } from '@sluice/contracts';

/** AllSource's daily-revenue example: paid orders, summed per currency per UTC day. */
export function dailyRevenueDefinition(
  overrides: Partial<PipelineDefinitionInput> = {},
): PipelineDefinitionInput {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    name: 'daily-revenue',
    description: 'Revenue of paid orders per currency per day',
    source_event_types: ['order.placed'],
    operators: [
      { type: 'filter', field: 'status', op: 'eq', value: 'paid' },
      {
        type: 'window',
        config: { window_type: 'tumbling', size_seconds: 86400 },
        aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
      },
    ],
    enabled: true,
    output: 'daily_revenue',
    ...overrides,
  };
}

export interface OrderOptions {
  id?: string;
  entity?: string;
  status?: string;
  total?: number;
  currency?: string;
  region?: string;
  type?: string;
}

export function orderEvent(timestamp: string | number, options: OrderOptions = {}): EventEnvelope {
  return {
    id: options.id ?? `evt-${String(timestamp)}`,
    event_type: options.type ?? 'order.placed',
    entity_id: options.entity ?? 'order-1',
    timestamp,
    payload: {
      status: options.status ?? 'paid',
      total: options.total ?? 10,
      currency: options.currency ?? 'gbp',
      region: options.region ?? 'uk',
    },
    metadata: { source: 'web' },
  };
}

/** A small, fast, seedable PRNG (mulberry32): generated data is the same on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CURRENCIES = ['gbp', 'usd', 'eur', 'jpy', 'chf', 'aud', 'cad', 'sek'];
const STATUSES = ['paid', 'paid', 'paid', 'pending', 'refunded'];
const REGIONS = ['uk', 'us', 'eu', 'apac'];

export interface GenerateOrdersOptions {
  count: number;
  seed?: number;
  /** First event time, epoch ms. */
  start?: number;
  /** Mean gap between consecutive events, ms. */
  stepMs?: number;
  entities?: number;
}

/**
 * Orders in event-time order with totals in cents-exact pounds, across 8 currencies, 5 statuses
 * (3 of them paid) and 4 regions: the input of the daily-revenue tests and benchmarks.
 */
export function generateOrders(options: GenerateOrdersOptions): EventEnvelope[] {
  const random = seededRandom(options.seed ?? 42);
  const entities = options.entities ?? 1000;
  const stepMs = options.stepMs ?? 1000;
  let time = options.start ?? Date.UTC(2026, 10, 1);
  const events: EventEnvelope[] = new Array(options.count);
  for (let i = 0; i < options.count; i++) {
    time += Math.floor(random() * 2 * stepMs);
    events[i] = {
      id: `order-event-${i}`,
      event_type: 'order.placed',
      entity_id: `order-${Math.floor(random() * entities)}`,
      timestamp: new Date(time).toISOString(),
      payload: {
        status: STATUSES[Math.floor(random() * STATUSES.length)],
        total: Math.round(random() * 50000) / 100,
        currency: CURRENCIES[Math.floor(random() * CURRENCIES.length)],
        region: REGIONS[Math.floor(random() * REGIONS.length)],
      },
    };
  }
  return events;
}
