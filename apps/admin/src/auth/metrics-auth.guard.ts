import { Inject, Injectable } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { bearerMatches, tokenDigest } from '@sluice/config';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { DomainError } from '../errors/domain-error';

/** With METRICS_TOKEN set, /metrics requires `Authorization: Bearer $METRICS_TOKEN`. */
@Injectable()
export class MetricsAuthGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(ADMIN_CONFIG) config: AdminConfig) {
    this.expected =
      config.metricsToken === undefined ? undefined : tokenDigest(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) return true;
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    if (!bearerMatches(header, this.expected))
      throw new DomainError(
        'unauthorized',
        'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
      );
    return true;
  }
}
