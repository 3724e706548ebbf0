// The admin over TLS to a PostgreSQL that refuses unencrypted connections: sslmode=verify-full
// with DATABASE_CA_FILE migrates, serves the API and stores definitions; without TLS the server
// refuses it, and a certificate from another CA is refused by the admin.
import { readFileSync } from 'node:fs';

import pg from 'pg';

import { freePort, TlsPostgres } from '@sluice/testing';

import { runMigrations } from '../src/migrate';
import { client, dailyRevenue, startAdmin, topicPrefix } from './support/admin-harness';

describe('PostgreSQL over TLS', () => {
  let server: TlsPostgres;

  beforeAll(async () => {
    server = new TlsPostgres(await freePort());
    server.start();
    const db = new pg.Client({
      connectionString: server.url(),
      ssl: { ca: readFileSync(server.caFile, 'utf8') },
    });
    await db.connect();
    await db.query('CREATE DATABASE sluice_tls');
    await db.end();
  }, 60_000);

  afterAll(() => server?.stop());

  it('migrates and serves the API with sslmode=verify-full and the CA file', async () => {
    const url = `${server.url('sluice_tls')}?sslmode=verify-full`;
    await runMigrations(url, () => undefined, server.caFile);
    const admin = await startAdmin({
      DATABASE_URL: url,
      DATABASE_CA_FILE: server.caFile,
      SLUICE_TOPIC_PREFIX: topicPrefix(),
    });
    try {
      const api = client(admin.url);
      const created = await api('POST', '/api/v1/pipelines', dailyRevenue());
      expect(created.status).toBe(201);
      const id = created.body['pipeline_id'] as string;
      expect((await api('GET', `/api/v1/pipelines/${id}`)).status).toBe(200);
      expect((await fetch(`${admin.url}/health/ready`)).status).toBeLessThan(500);
    } finally {
      await admin.close();
    }
  });

  it('is refused by the server without TLS, and refuses a certificate from another CA', async () => {
    const plain = runMigrations(server.url('sluice_tls'), () => undefined, undefined);
    await expect(plain).rejects.toThrow(/no encryption|pg_hba\.conf rejects/);
    const wrongCa = runMigrations(
      `${server.url('sluice_tls')}?sslmode=verify-full`,
      () => undefined,
      server.otherCaFile,
    );
    await expect(wrongCa).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });
});
