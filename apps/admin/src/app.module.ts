import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';

import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { MetricsAuthGuard } from './auth/metrics-auth.guard';
import { TokenStore } from './auth/token-store';
import { ADMIN_CONFIG } from './config/admin-config';
import type { AdminConfig } from './config/admin-config';
import { DatabaseService } from './database/database.service';
import { ApiExceptionFilter } from './errors/api-exception.filter';
import { HealthController } from './health/health.controller';
import { KafkaService } from './kafka/kafka.service';
import { loggerOptions } from './logging/logger-options';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';
import { OutboxRelayService } from './outbox/outbox-relay.service';
import { ReconcilerService } from './outbox/reconciler.service';
import { AuditController } from './pipelines/audit.controller';
import { PipelinesController } from './pipelines/pipelines.controller';
import { PipelinesService } from './pipelines/pipelines.service';
import { StatsService } from './stats/stats.service';

@Module({})
export class AppModule {
  static forConfig(config: AdminConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [LoggerModule.forRoot(loggerOptions(config))],
      controllers: [PipelinesController, AuditController, HealthController, MetricsController],
      providers: [
        { provide: ADMIN_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        BearerAuthGuard,
        TokenStore,
        MetricsAuthGuard,
        DatabaseService,
        KafkaService,
        MetricsService,
        OutboxRelayService,
        ReconcilerService,
        PipelinesService,
        StatsService,
      ],
    };
  }
}
