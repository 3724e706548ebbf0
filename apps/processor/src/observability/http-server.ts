import { createServer } from 'node:http';
import type { Server } from 'node:http';

import type { Registry } from 'prom-client';

import { bearerMatches, tokenDigest } from '@sluice/config';

/** The probe routes deployments point at (k8s/, docker/); `/health/ready` answers like `/health`. */
export const HEALTH_ROUTES = { live: '/health/live', ready: '/health' } as const;

export interface HealthReport {
  ready: boolean;
  [detail: string]: unknown;
}

/**
 * `/metrics` for Prometheus (with `metricsToken`, only for `Authorization: Bearer <it>`; the
 * probes stay open), `/health` (200 when processing, 503 otherwise) for probes.
 */
export function startObservabilityServer(
  port: number,
  registry: Registry,
  health: () => HealthReport,
  metricsToken?: string,
): Promise<Server> {
  const expected = metricsToken === undefined ? undefined : tokenDigest(metricsToken);
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/metrics') {
      if (expected !== undefined && !bearerMatches(request.headers.authorization, expected)) {
        response.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer',
        });
        response.end(
          JSON.stringify({
            error: 'unauthorized',
            message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
          }),
        );
        return;
      }
      registry.metrics().then(
        (body) => {
          response.writeHead(200, { 'content-type': registry.contentType });
          response.end(body);
        },
        (error: Error) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(error.message);
        },
      );
      return;
    }
    if (request.method === 'GET' && (path === HEALTH_ROUTES.ready || path === '/health/ready')) {
      const report = health();
      response.writeHead(report.ready ? 200 : 503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: report.ready ? 'ok' : 'unavailable', ...report }));
      return;
    }
    if (request.method === 'GET' && path === HEALTH_ROUTES.live) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status":"ok"}');
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"not_found"}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}
