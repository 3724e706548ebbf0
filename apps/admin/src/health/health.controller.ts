import { Controller, Get, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import { DatabaseService } from '../database/database.service';
import { KafkaService } from '../kafka/kafka.service';
import { OutboxRelayService } from '../outbox/outbox-relay.service';
import type { RefusedRecord } from '../outbox/outbox-relay.service';

const CHECK_TIMEOUT_MS = 2000;

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseService,
    private readonly kafka: KafkaService,
    private readonly relay: OutboxRelayService,
  ) {}

  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when PostgreSQL and Kafka both answer (docs/design.md §6). Outbox records Kafka refused
   * for good are listed, but do not make the admin unready: it is through the API that they are
   * mended (a corrected definition is a newer record).
   */
  @Get('ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const refused: Promise<RefusedRecord[]> = this.database.ready
      ? within(this.relay.refused(), CHECK_TIMEOUT_MS).catch(() => [])
      : Promise.resolve([]);
    const [postgres, kafka] = await Promise.all([
      check(async () => {
        if (!this.database.ready) throw new Error('not connected');
        await this.database.dataSource.query('SELECT 1');
      }),
      check(async () => {
        await (await this.kafka.admin()).describeCluster();
      }),
    ]);
    const ok = postgres.ok && kafka.ok;
    void reply.status(ok ? 200 : 503);
    return {
      status: ok ? 'ok' : 'unavailable',
      checks: { postgres, kafka },
      outbox: { refused: await refused },
    };
  }
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function check(probe: () => Promise<void>): Promise<{ ok: boolean; error?: string }> {
  try {
    await within(probe(), CHECK_TIMEOUT_MS);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
