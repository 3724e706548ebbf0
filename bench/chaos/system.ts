// The Sluice a chaos run attacks: a broker of its own (so it can be restarted), a fresh
// PostgreSQL database, the built admin and N processor replicas as real processes. Every
// process's output is appended to a log file in the run's directory.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SERVER_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A KRaft broker, or a cluster of `nodes` (node i on port + 2(i-1)), in a directory of its own,
 * started, stopped and killed by the scripts.
 */
export class ChaosBroker {
  private readonly home = mkdtempSync(join(tmpdir(), 'sluice-chaos-broker-'));

  constructor(
    readonly port: number,
    readonly nodes = 1,
  ) {}

  /** Its data and logs. */
  get directory(): string {
    return this.home;
  }

  /** The bootstrap list. */
  get address(): string {
    return Array.from({ length: this.nodes }, (_, i) => `127.0.0.1:${this.port + 2 * i}`).join(',');
  }

  /** Starts every node that is not running. */
  up(): Promise<unknown> {
    return this.script('kafka-up.sh');
  }

  /** SIGKILLs node `node` (1-based): no controlled shutdown, as a crash. */
  kill(node: number): Promise<unknown> {
    return this.script('kafka-kill.sh', ['--node', String(node)]);
  }

  /** A controlled shutdown (SIGTERM), as an orchestrator's restart does. */
  down(): Promise<unknown> {
    return this.script('kafka-down.sh');
  }

  async destroy(): Promise<void> {
    await this.down().catch(() => undefined);
    rmSync(this.home, { recursive: true, force: true });
  }

  private script(name: string, args: string[] = []) {
    return run('bash', [join(ROOT, 'scripts/kafka', name), ...args], {
      env: {
        ...process.env,
        SLUICE_KAFKA_HOME: this.home,
        SLUICE_KAFKA_LIBS: join(ROOT, '.local/kafka/libs'),
        KAFKA_PORT: String(this.port),
        KAFKA_CONTROLLER_PORT: String(this.port + 1),
        KAFKA_NODES: String(this.nodes),
        KAFKA_HEAP_MAX: this.nodes > 1 ? '512m' : '1g',
      },
    });
  }
}

/** A fresh database with the admin's migrations applied, dropped at the end. */
export class ChaosDatabase {
  readonly name = `sluice_chaos_${randomBytes(6).toString('hex')}`;

  get url(): string {
    const url = new URL(SERVER_URL);
    url.pathname = `/${this.name}`;
    return url.toString();
  }

  async create(): Promise<void> {
    await run(process.execPath, [join(ROOT, 'scripts/db/migrate.mjs')], {
      env: { ...process.env, DATABASE_URL: this.url },
    });
  }

  async drop(): Promise<void> {
    const maintenance = new URL(SERVER_URL);
    maintenance.pathname = '/postgres';
    const client = new pg.Client({ connectionString: maintenance.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
    await client.end();
  }
}

/** One of the built apps as a process; `start` again after it died is a restart. */
export class AppProcess {
  private child: ChildProcess | undefined;
  private readonly log: WriteStream;
  starts = 0;
  /** Exits with an error code: what a signal sent by the run causes never counts. */
  crashes = 0;

  constructor(
    readonly name: string,
    private readonly app: 'admin' | 'processor',
    private readonly env: Record<string, string>,
    logDirectory: string,
  ) {
    this.log = createWriteStream(join(logDirectory, `${name}.log`), { flags: 'a' });
  }

  /** Where its HTTP server listens (the admin's API, a processor's metrics and health). */
  get url(): string {
    return `http://127.0.0.1:${this.env['ADMIN_PORT'] ?? this.env['METRICS_PORT']}`;
  }

  get running(): boolean {
    return (
      this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
    );
  }

  start(): void {
    this.starts += 1;
    const child = spawn(process.execPath, [join(ROOT, `apps/${this.app}/dist/main.js`)], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.once('exit', (code) => {
      if (code !== null && code !== 0) this.crashes += 1;
    });
    this.child = child;
  }

  /** Freezes the process (SIGSTOP) for `ms`, then lets it go on (SIGCONT): a long GC pause. */
  async freeze(ms: number): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, ms));
    child.kill('SIGCONT');
  }

  /** Exits with the signal and waits for the exit (SIGTERM: at most 30 s, then SIGKILL). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null)
      return child?.exitCode ?? null;
    const exited = once(child, 'exit') as Promise<[number | null]>;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = await exited;
    clearTimeout(timer);
    return code;
  }
}
