// A small Sluice for the CLI's tests: a fresh database, the built admin and one processor as
// real processes on the real broker, all under a topic prefix and source topic of their own.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { uniqueName } from '@sluice/kafka/testing';
import { freePort, until } from '@sluice/testing';
import pg from 'pg';

const ROOT = join(__dirname, '..', '..', '..');
const CLI = join(ROOT, 'apps/cli/dist/main.js');
const SERVER_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface Launched {
  exited: Promise<number | null>;
  output(): string;
  kill(): void;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

type App = 'admin' | 'processor' | 'cli';

export interface SystemOptions {
  /** Each app's own variables over the common ones (a secured cluster's user per app, say). */
  env?: Partial<Record<App, Record<string, string>>>;
  /**
   * A PostgreSQL that takes TLS only (`url` without parameters, of its `postgres` database):
   * the admin's database is made there and reached with sslmode=verify-full and `caFile`.
   */
  tlsPostgres?: { url: string; caFile: string };
}

export class SluiceSystem {
  readonly token = `cli-e2e-${uniqueName('token')}`;
  readonly prefix = uniqueName('sluice-cli');
  /** The processor's CONSUMER_GROUP: the processor group the examples are bound to here. */
  readonly group = `${this.prefix}-group`;
  /** A source topic per example: each example's events keep their own event-time range. */
  readonly sourceTopics = ['a', 'b', 'c', 'd'].map((n) => uniqueName(`cli-events-${n}`));
  adminUrl = '';
  private readonly children: ChildProcess[] = [];
  private readonly logs: string[] = [];
  private readonly databases: string[] = [];
  private databaseUrl = '';

  constructor(private readonly options: SystemOptions = {}) {}

  async start(): Promise<void> {
    this.databaseUrl = this.newDatabase();
    const adminPort = await freePort();
    this.adminUrl = `http://127.0.0.1:${adminPort}`;
    this.startAdmin({ ADMIN_PORT: String(adminPort) });
    await this.startProcessor('cli-e2e-1');
    await until(async () => (await fetch(`${this.adminUrl}/health/ready`)).ok, {
      what: 'admin ready',
    });
  }

  /** A database of its own, made and migrated as `npm run db:migrate` does; dropped by stop. */
  newDatabase(): string {
    const name = `sluice_cli_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const url = new URL(this.options.tlsPostgres?.url ?? SERVER_URL);
    url.pathname = `/${name}`;
    if (this.options.tlsPostgres) url.searchParams.set('sslmode', 'verify-full');
    const migrate = spawnSync(process.execPath, [join(ROOT, 'scripts/db/migrate.mjs')], {
      env: { ...process.env, DATABASE_URL: url.toString(), ...this.databaseCa() },
      encoding: 'utf8',
    });
    if (migrate.status !== 0) throw new Error(`db:migrate failed: ${migrate.stderr}`);
    this.databases.push(name);
    return url.toString();
  }

  private databaseCa(): Record<string, string> {
    const tls = this.options.tlsPostgres;
    return tls ? { DATABASE_CA_FILE: tls.caFile } : {};
  }

  /** An admin of this system (on its database); `env` over its usual variables. */
  startAdmin(env: Record<string, string> = {}): Launched {
    return this.launch('admin', {
      SLUICE_TOPIC_PREFIX: this.prefix,
      LOG_LEVEL: 'warn',
      DATABASE_URL: this.databaseUrl,
      ...this.databaseCa(),
      SLUICE_ADMIN_TOKEN: this.token,
      ADMIN_PORT: '0',
      ...this.options.env?.admin,
      ...env,
    });
  }

  /** A processor replica of this system; `env` over its usual variables. */
  async startProcessor(id: string, env: Record<string, string> = {}): Promise<Launched> {
    return this.launch('processor', {
      SLUICE_TOPIC_PREFIX: this.prefix,
      LOG_LEVEL: 'warn',
      SOURCE_TOPICS: this.sourceTopics.join(','),
      CONSUMER_GROUP: this.group,
      PROCESSOR_ID: id,
      METRICS_PORT: String(await freePort()),
      STATS_INTERVAL_MS: '500',
      ...this.options.env?.processor,
      ...env,
    });
  }

  private launch(app: Exclude<App, 'cli'>, env: Record<string, string>): Launched {
    const child = spawn(process.execPath, [join(ROOT, `apps/${app}/dist/main.js`)], {
      env: { ...process.env, ...this.options.env?.[app], ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString();
      this.logs.push(`[${app}] ${chunk.toString()}`);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.children.push(child);
    return {
      exited: new Promise((done) => child.once('exit', (code) => done(code))),
      output: () => output,
      kill: () => child.kill('SIGKILL'),
    };
  }

  /** Runs `sluice <args>` as a user would, with this system's environment. */
  cli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        SLUICE_URL: this.adminUrl,
        SLUICE_ADMIN_TOKEN: this.token,
        SLUICE_TOPIC_PREFIX: this.prefix,
        ...this.options.env?.cli,
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input ?? '');
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  recentLogs(): string {
    return this.logs.slice(-40).join('');
  }

  /** Everything the admin and the processors have logged (at LOG_LEVEL=warn). */
  allLogs(): string {
    return this.logs.join('');
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null) return;
        child.kill('SIGTERM');
        // The timer is cleared once the child is gone: a pending one kept Jest from exiting.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          once(child, 'exit'),
          new Promise((done) => (timer = setTimeout(done, 10_000))),
        ]);
        clearTimeout(timer);
        child.kill('SIGKILL');
      }),
    );
    if (this.databases.length === 0) return;
    const tls = this.options.tlsPostgres;
    const maintenance = new URL(tls?.url ?? SERVER_URL);
    maintenance.pathname = '/postgres';
    const client = new pg.Client({
      connectionString: maintenance.toString(),
      ssl: tls ? { ca: readFileSync(tls.caFile, 'utf8') } : false,
    });
    await client.connect();
    for (const name of this.databases)
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}
