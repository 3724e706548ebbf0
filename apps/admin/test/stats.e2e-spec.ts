// Stats: processors report per-pipeline counters on the stats topic; the admin sums live ones.
import { createKafka } from '@sluice/kafka';
import { internalTopics, processorStatsKey } from '@sluice/contracts';
import type { ProcessorStats } from '@sluice/contracts';
import { logLevel } from 'kafkajs';

import {
  client,
  dailyRevenue,
  eventually,
  freshDatabase,
  startAdmin,
  topicPrefix,
} from './support/admin-harness';

function report(
  processor: string,
  pipelineId: string,
  overrides: Partial<ProcessorStats> = {},
): ProcessorStats {
  return {
    processor_id: processor,
    pipeline_id: pipelineId,
    reset_generation: 0,
    events_processed: 100,
    events_filtered: 10,
    events_skipped: 1,
    events_failed: 2,
    late_events: 3,
    results_emitted: 40,
    dead_lettered: 2,
    lag: 5,
    last_processed: '2026-11-29T10:00:00.000Z',
    reported_at: new Date().toISOString(),
    ...overrides,
  };
}

describe('pipeline stats', () => {
  it('sums live processors, lists stale ones without summing them, and ignores reports from before a reset', async () => {
    const database = await freshDatabase();
    const prefix = topicPrefix();
    const admin = await startAdmin({
      DATABASE_URL: database.url,
      SLUICE_TOPIC_PREFIX: prefix,
      SLUICE_STATS_STALE_SECONDS: '30',
    });
    const api = client(admin.url);
    const kafka = createKafka({ clientId: 'e2e-stats', logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    try {
      const id = (await api('POST', '/api/v1/pipelines', dailyRevenue())).body[
        'pipeline_id'
      ] as string;
      const publish = (stats: ProcessorStats) =>
        producer.send({
          topic: internalTopics(prefix).stats,
          messages: [
            {
              key: processorStatsKey(stats.processor_id, stats.pipeline_id),
              value: JSON.stringify(stats),
            },
          ],
        });
      await eventually(async () =>
        expect((await api('GET', `/api/v1/pipelines/${id}/stats`)).status).toBe(200),
      );
      await publish(report('p-1', id));
      await publish(
        report('p-2', id, {
          events_processed: 50,
          lag: 7,
          last_processed: '2026-11-29T11:00:00.000Z',
        }),
      );
      await publish(
        report('p-3', id, {
          events_processed: 1000,
          reported_at: new Date(Date.now() - 120_000).toISOString(),
        }),
      );

      const stats = await eventually(async () => {
        const response = await api<Record<string, unknown>>('GET', `/api/v1/pipelines/${id}/stats`);
        expect((response.body['processors'] as unknown[]).length).toBe(3);
        return response.body;
      });
      expect(stats).toMatchObject({
        pipeline_id: id,
        events_processed: 150,
        events_filtered: 20,
        events_failed: 4,
        results_emitted: 80,
        late_events: 6,
        dead_lettered: 4,
        lag: 12,
        last_processed: '2026-11-29T11:00:00.000Z',
      });
      expect(
        (stats['processors'] as Array<{ processor_id: string; stale: boolean }>).map((p) => [
          p.processor_id,
          p.stale,
        ]),
      ).toEqual([
        ['p-1', false],
        ['p-2', false],
        ['p-3', true],
      ]);

      const all = await api<{ stats: Array<{ pipeline_id: string }>; total: number }>(
        'GET',
        '/api/v1/pipelines/stats',
      );
      expect(all.body.total).toBe(1);
      expect(all.body.stats[0]).toMatchObject({ pipeline_id: id, events_processed: 150 });

      await api('PUT', `/api/v1/pipelines/${id}/reset`);
      expect((await api('GET', `/api/v1/pipelines/${id}/stats`)).body).toMatchObject({
        events_processed: 0,
        processors: [],
      });
      await publish(report('p-1', id, { reset_generation: 1, events_processed: 7 }));
      await eventually(async () =>
        expect((await api('GET', `/api/v1/pipelines/${id}/stats`)).body).toMatchObject({
          events_processed: 7,
        }),
      );
    } finally {
      await producer.disconnect();
      await admin.close();
      await database.drop();
    }
  });
});
