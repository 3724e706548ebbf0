import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The admin's Prometheus registry and instruments, served on GET /metrics. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'sluice_admin_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'sluice_admin_http_request_duration_seconds',
    help: 'HTTP request duration by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly outboxPending = new Gauge({
    name: 'sluice_admin_outbox_pending',
    help: 'Definition changes committed to PostgreSQL and not yet published to Kafka (last seen)',
    registers: [this.registry],
  });

  readonly outboxRefused = new Gauge({
    name: 'sluice_admin_outbox_refused',
    help: 'Outbox records Kafka refused for good (passed over), whose pipeline sent nothing newer',
    registers: [this.registry],
  });

  readonly outboxPublished = new Counter({
    name: 'sluice_admin_outbox_published_total',
    help: 'Definition records published to the pipelines topic',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'sluice_admin_' });
  }
}
