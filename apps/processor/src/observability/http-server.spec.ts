import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Registry } from 'prom-client';

import { startObservabilityServer } from './http-server';

describe('the observability server', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((done) => s.close(done)))));

  async function serve(metricsToken?: string) {
    const server = await startObservabilityServer(
      0,
      new Registry(),
      () => ({ ready: true }),
      metricsToken,
    );
    servers.push(server);
    const { port } = server.address() as AddressInfo;
    return (path: string, authorization?: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        headers: authorization ? { authorization } : {},
      });
  }

  it('serves /metrics to anyone without METRICS_TOKEN', async () => {
    const get = await serve();
    expect((await get('/metrics')).status).toBe(200);
  });

  it('serves /metrics only for the bearer of METRICS_TOKEN, and keeps the probes open', async () => {
    const token = 'processor-metrics-token-0123456789';
    const get = await serve(token);
    const refused = await get('/metrics');
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('METRICS_TOKEN');
    expect((await get('/metrics', `Bearer ${token}x`)).status).toBe(401);
    expect((await get('/metrics', `Bearer ${token}`)).status).toBe(200);
    expect((await get('/health')).status).toBe(200);
    expect((await get('/health/live')).status).toBe(200);
  });
});
