import { createParamDecorator, Injectable } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';

import { bearerToken } from '@sluice/config';

import { DomainError } from '../errors/domain-error';
import { allows } from './api-tokens';
import type { ApiToken, Role } from './api-tokens';
import { TokenStore } from './token-store';

/** The role a route needs (a controller's, unless the route names its own); `viewer` if none. */
export const RequiresRole = Reflector.createDecorator<Role>();

type AuthenticatedRequest = FastifyRequest & { principal?: ApiToken };

/** The token the request was let in with: who the version history says made a change. */
export const Principal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiToken => {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (principal === undefined)
      throw new Error('Principal used on a route without BearerAuthGuard');
    return principal;
  },
);

/**
 * Every /api route requires `Authorization: Bearer <token>` of a known token (401 otherwise)
 * whose role is at least the route's (403 naming the role it lacks). Tokens are found by their
 * SHA-256 digests, compared in constant time (api-tokens.ts).
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: TokenStore,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers.authorization;
    const presented = bearerToken(header);
    if (presented === undefined) {
      throw new DomainError(
        'unauthorized',
        'missing bearer token: send Authorization: Bearer <token>',
      );
    }
    const token = this.tokens.find(presented);
    if (token === undefined) throw new DomainError('unauthorized', 'invalid bearer token');
    const required =
      this.reflector.getAllAndOverride(RequiresRole, [context.getHandler(), context.getClass()]) ??
      'viewer';
    if (!allows(token.role, required)) {
      throw new DomainError(
        'forbidden',
        `this request needs the ${required} role; the token ${token.name} has ${token.role}`,
      );
    }
    request.principal = token;
    return true;
  }
}
