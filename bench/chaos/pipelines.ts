// The pipelines a chaos run registers: one of each window type over the same orders, with no
// idle timeout (a wall-clock flush would make results depend on timing, not on the events).
import type { PipelineDefinitionInput } from '@sluice/contracts';
import { dailyRevenueDefinition } from '@sluice/operators/testing';

export function chaosPipelines(prefix: string): Array<PipelineDefinitionInput & { id: string }> {
  return [
    {
      ...dailyRevenueDefinition({ output: `${prefix}.daily_revenue` }),
      id: '00000000-0000-4000-8000-00000000c001',
    },
    {
      id: '00000000-0000-4000-8000-00000000c002',
      name: 'hourly-average-by-region',
      description: 'Average order total per region over the last hour, every 15 minutes',
      source_event_types: ['order.placed'],
      operators: [
        {
          type: 'window',
          config: { window_type: 'sliding', size_seconds: 3600, slide_seconds: 900 },
          aggregation: { type: 'reduce', field: 'total', function: 'avg', group_by: 'region' },
        },
      ],
      output: `${prefix}.region_hourly_average`,
    },
    {
      id: '00000000-0000-4000-8000-00000000c003',
      name: 'customer-sessions',
      description: 'Orders per customer session (15 minutes without an order ends one)',
      source_event_types: ['order.placed'],
      operators: [
        {
          type: 'window',
          config: { window_type: 'session', session_timeout_seconds: 900 },
          aggregation: {
            type: 'reduce',
            field: 'total',
            function: 'count',
            group_by: '$.entity_id',
          },
        },
      ],
      output: `${prefix}.customer_sessions`,
    },
  ];
}
