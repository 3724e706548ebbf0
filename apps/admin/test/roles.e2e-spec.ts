// The admin API's roles against the real app and PostgreSQL: each route answers 2xx to the
// roles that may use it and 403 naming the missing role to the others; unknown tokens are 401;
// the version history's actor is the token's name; a SIGHUP re-reads the tokens file.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import fc from 'fast-check';

import { freePort, until } from '@sluice/testing';

import {
  client,
  dailyRevenue,
  freshDatabase,
  startAdmin,
  TOKEN,
  topicPrefix,
} from './support/admin-harness';
import type { RunningAdmin } from './support/admin-harness';
import { TokenStore } from '../src/auth/token-store';

type Role = 'viewer' | 'editor' | 'admin';
const ROLES: Role[] = ['viewer', 'editor', 'admin'];
const SECRETS: Record<Role, string> = {
  viewer: `viewer-${randomUUID()}`,
  editor: `editor-${randomUUID()}`,
  admin: `auditor-${randomUUID()}`,
};
const NAMES: Record<Role, string> = { viewer: 'vera', editor: 'ed', admin: 'audrey' };
const METRICS_TOKEN = `metrics-${randomUUID()}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const entry = (name: string, secret: string, role: Role) =>
  `- { name: ${name}, token_sha256: ${sha256(secret)}, role: ${role} }`;

describe('admin API roles', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: RunningAdmin;
  let tokensFile: string;

  beforeAll(async () => {
    database = await freshDatabase();
    tokensFile = join(mkdtempSync(join(tmpdir(), 'sluice-roles-')), 'tokens.yaml');
    writeFileSync(
      tokensFile,
      ROLES.map((role) => entry(NAMES[role], SECRETS[role], role)).join('\n'),
    );
    admin = await startAdmin({
      LOG_LEVEL: 'error', // every 401 and 403 here is meant
      DATABASE_URL: database.url,
      SLUICE_TOPIC_PREFIX: topicPrefix(),
      SLUICE_API_TOKENS_FILE: tokensFile,
      METRICS_TOKEN,
    });
  });

  afterAll(async () => {
    await admin?.close();
    await database?.drop();
  });

  /** A pipeline made with SLUICE_ADMIN_TOKEN, for a route to act on. */
  async function pipeline(): Promise<string> {
    const created = await client(admin.url)('POST', '/api/v1/pipelines', dailyRevenue());
    expect(created.status).toBe(201);
    return created.body['pipeline_id'] as string;
  }

  const routes: Array<{
    route: string;
    needs: Role;
    call: (api: ReturnType<typeof client>, id: string) => ReturnType<ReturnType<typeof client>>;
  }> = [
    {
      route: 'GET /api/v1/pipelines',
      needs: 'viewer',
      call: (api) => api('GET', '/api/v1/pipelines'),
    },
    {
      route: 'GET /api/v1/pipelines/stats',
      needs: 'viewer',
      call: (api) => api('GET', '/api/v1/pipelines/stats'),
    },
    {
      route: 'GET /api/v1/pipelines/{id}',
      needs: 'viewer',
      call: (api, id) => api('GET', `/api/v1/pipelines/${id}`),
    },
    {
      route: 'GET /api/v1/pipelines/{id}/stats',
      needs: 'viewer',
      call: (api, id) => api('GET', `/api/v1/pipelines/${id}/stats`),
    },
    {
      route: 'GET /api/v1/pipelines/{id}/versions',
      needs: 'viewer',
      call: (api, id) => api('GET', `/api/v1/pipelines/${id}/versions`),
    },
    {
      route: 'POST /api/v1/pipelines/validate',
      needs: 'viewer',
      call: (api) => api('POST', '/api/v1/pipelines/validate', dailyRevenue()),
    },
    {
      route: 'POST /api/v1/pipelines/preview',
      needs: 'viewer',
      call: (api) =>
        api('POST', '/api/v1/pipelines/preview', { pipeline: dailyRevenue(), events: [] }),
    },
    {
      route: 'POST /api/v1/pipelines',
      needs: 'editor',
      call: (api) => api('POST', '/api/v1/pipelines', dailyRevenue()),
    },
    {
      route: 'PUT /api/v1/pipelines/{id}',
      needs: 'editor',
      call: (api, id) => api('PUT', `/api/v1/pipelines/${id}`, dailyRevenue({ name: 'renamed' })),
    },
    {
      route: 'PUT /api/v1/pipelines/{id}/reset',
      needs: 'editor',
      call: (api, id) => api('PUT', `/api/v1/pipelines/${id}/reset`),
    },
    {
      route: 'POST /api/v1/pipelines/{id}/replay',
      needs: 'editor',
      call: (api, id) => api('POST', `/api/v1/pipelines/${id}/replay`, { from: 'earliest' }),
    },
    {
      route: 'DELETE /api/v1/pipelines/{id}',
      needs: 'editor',
      call: (api, id) => api('DELETE', `/api/v1/pipelines/${id}`),
    },
    { route: 'GET /api/v1/audit', needs: 'admin', call: (api) => api('GET', '/api/v1/audit') },
  ];

  it('answers each route 2xx to the roles that may use it and 403 naming the role to the others', async () => {
    const answers: string[] = [];
    const expected: string[] = [];
    for (const { route, needs, call } of routes) {
      for (const role of ROLES) {
        const id = await pipeline();
        const response = await call(client(admin.url, SECRETS[role]), id);
        const allowed = ROLES.indexOf(role) >= ROLES.indexOf(needs);
        answers.push(
          `${route} as ${role}: ${response.status >= 200 && response.status < 300 ? '2xx' : response.status}`,
        );
        expected.push(`${route} as ${role}: ${allowed ? '2xx' : 403}`);
        if (!allowed) {
          expect(response.body).toMatchObject({
            error: 'forbidden',
            message: `this request needs the ${needs} role; the token ${NAMES[role]} has ${role}`,
          });
          // A refused change changed nothing.
          const read = await client(admin.url)('GET', `/api/v1/pipelines/${id}`);
          expect(read.body).toMatchObject({ version: 1, reset_generation: 0 });
        }
      }
    }
    expect(answers).toEqual(expected);
  });

  it("records the token's name as the actor, and X-Sluice-Actor only as a note", async () => {
    const editor = client(admin.url, SECRETS.editor);
    const created = await editor('POST', '/api/v1/pipelines', dailyRevenue(), {
      'x-sluice-actor': 'someone-else',
    });
    const id = created.body['pipeline_id'] as string;
    await editor('PUT', `/api/v1/pipelines/${id}`, dailyRevenue({ name: 'v2' }));
    const versions = await editor<{ versions: Array<Record<string, unknown>> }>(
      'GET',
      `/api/v1/pipelines/${id}/versions`,
    );
    expect(versions.body.versions.map((v) => [v['changed_by'], v['note']])).toEqual([
      ['ed', 'someone-else'],
      ['ed', null],
    ]);
    const audit = await client(admin.url, SECRETS.admin)<{
      changes: Array<Record<string, unknown>>;
    }>('GET', '/api/v1/audit?limit=2');
    expect(audit.status).toBe(200);
    expect(audit.body.changes).toEqual([
      expect.objectContaining({
        pipeline_id: id,
        version: 2,
        change: 'updated',
        changed_by: 'ed',
        name: 'v2',
      }),
      expect.objectContaining({
        pipeline_id: id,
        version: 1,
        change: 'created',
        changed_by: 'ed',
        note: 'someone-else',
      }),
    ]);
    expect((await client(admin.url, SECRETS.admin)('GET', '/api/v1/audit?limit=0')).status).toBe(
      400,
    );
  });

  it('answers 401 to every token it does not know, fuzzed near the real ones too', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ minLength: 1 }).filter((s) => !/\s/.test(s)),
          fc.constantFrom(...Object.values(SECRETS), TOKEN).chain((secret) =>
            fc.oneof(
              fc.nat({ max: secret.length - 1 }).map((n) => secret.slice(0, n) || 'x'),
              fc
                .string({ minLength: 1 })
                .filter((s) => !/\s/.test(s))
                .map((tail) => secret + tail),
              fc
                .nat({ max: secret.length - 1 })
                .map(
                  (n) => secret.slice(0, n) + (secret[n] === 'a' ? 'b' : 'a') + secret.slice(n + 1),
                ),
            ),
          ),
        ),
        async (token) => {
          const response = await client(admin.url, token)('GET', '/api/v1/pipelines');
          expect(response.status).toBe(401);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('re-reads the tokens file on SIGHUP (a real admin process), keeping SLUICE_ADMIN_TOKEN', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-roles-')), 'tokens.yaml');
    writeFileSync(file, entry('vera', SECRETS.viewer, 'viewer'));
    const port = await freePort();
    const child = spawn(process.execPath, [resolve(__dirname, '../dist/main.js')], {
      env: {
        ...process.env,
        SLUICE_ADMIN_TOKEN: TOKEN,
        SLUICE_API_TOKENS_FILE: file,
        ADMIN_PORT: String(port),
        DATABASE_URL: database.url,
        SLUICE_TOPIC_PREFIX: topicPrefix(),
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    const status = async (token: string) =>
      (await client(url, token)('GET', '/api/v1/pipelines').catch(() => ({ status: 0 }))).status;
    try {
      await until(async () => (await status(SECRETS.viewer)) === 200, {
        timeoutMs: 30_000,
        what: 'the admin process answering',
      });
      const newcomer = `newcomer-${randomUUID()}`;
      writeFileSync(file, entry('nina', newcomer, 'viewer'));
      child.kill('SIGHUP');
      await until(async () => (await status(newcomer)) === 200, {
        timeoutMs: 10_000,
        what: 'the new token accepted after SIGHUP',
      });
      expect(await status(SECRETS.viewer)).toBe(401); // rotated away
      expect(await status(TOKEN)).toBe(200); // the environment's token stays
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('keeps the tokens in use when a re-read finds a problem in the file', async () => {
    writeFileSync(tokensFile, '- { name: broken');
    expect(admin.app.get(TokenStore).reload()).toBe(false);
    expect((await client(admin.url, SECRETS.viewer)('GET', '/api/v1/pipelines')).status).toBe(200);
    writeFileSync(tokensFile, entry('vera', SECRETS.viewer, 'viewer'));
    expect(admin.app.get(TokenStore).reload()).toBe(true);
    expect((await client(admin.url, SECRETS.editor)('GET', '/api/v1/pipelines')).status).toBe(401);
  });

  it('requires METRICS_TOKEN for /metrics when it is set', async () => {
    expect((await fetch(`${admin.url}/metrics`)).status).toBe(401);
    const scrape = await fetch(`${admin.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('# TYPE');
  });
});
