import { timingSafeEqual } from 'node:crypto';

import { Inject, Injectable } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { DomainError } from '../errors/domain-error';
import { digestOf } from './api-tokens';

/** With METRICS_TOKEN set, /metrics requires `Authorization: Bearer $METRICS_TOKEN`. */
@Injectable()
export class MetricsAuthGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(ADMIN_CONFIG) config: AdminConfig) {
    this.expected = config.metricsToken === undefined ? undefined : digestOf(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) return true;
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match === null || !timingSafeEqual(digestOf(match[1]!), this.expected))
      throw new DomainError(
        'unauthorized',
        'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
      );
    return true;
  }
}
