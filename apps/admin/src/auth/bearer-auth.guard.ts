import { createHash, timingSafeEqual } from 'node:crypto';

import { Inject, Injectable } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { DomainError } from '../errors/domain-error';

/**
 * Every /api route requires `Authorization: Bearer $SLUICE_ADMIN_TOKEN`. Tokens are compared as
 * SHA-256 digests with timingSafeEqual, so neither their content nor their length leaks through
 * response timing.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(ADMIN_CONFIG) config: AdminConfig) {
    this.expected = digest(config.adminToken);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (match === null) {
      throw new DomainError(
        'unauthorized',
        'missing bearer token: send Authorization: Bearer <SLUICE_ADMIN_TOKEN>',
      );
    }
    if (!timingSafeEqual(digest(match[1]!), this.expected)) {
      throw new DomainError('unauthorized', 'invalid bearer token');
    }
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
