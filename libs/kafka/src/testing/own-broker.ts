import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The workspace root, from libs/kafka/src/testing (sources) or libs/kafka/dist/testing (built).
const root = resolve(__dirname, '../../../..');

/**
 * A Kafka broker of the test's own (ports, data dir), which it may stop, start and kill at will;
 * with `nodes` > 1, a local cluster (node i on port + 2(i-1), as `KAFKA_NODES=N npm run
 * kafka:up` makes it).
 */
export class OwnBroker {
  private readonly home = mkdtempSync(join(tmpdir(), 'sluice-own-broker-'));

  readonly nodes: number;
  private readonly env: Record<string, string>;

  /** `env`: more of kafka-up.sh's variables (KAFKA_LOG4J_CONFIG for a post-mortem's logs). */
  constructor(
    readonly port: number,
    options: { nodes?: number; env?: Record<string, string> } = {},
  ) {
    this.nodes = options.nodes ?? 1;
    this.env = options.env ?? {};
  }

  /** A node's data directory (the log dirs DumpLogSegments reads). */
  dataDirectory(node = 1): string {
    return this.nodes === 1 ? join(this.home, 'data') : join(this.home, `node-${node}`, 'data');
  }

  /** The broker's data and logs (kept by `down`, removed by `destroy`). */
  get directory(): string {
    return this.home;
  }

  /** The bootstrap list (`host:port`, comma-separated for a cluster). */
  get address(): string {
    return this.addresses.join(',');
  }

  get addresses(): string[] {
    return Array.from({ length: this.nodes }, (_, i) => `127.0.0.1:${this.port + 2 * i}`);
  }

  /**
   * With SLUICE_KAFKA_SECURE=1: the variables of secure.env, a client's settings over SASL_SSL,
   * as `user` (one of kafka-secure.sh's users; its secure.env is for `sluice`).
   */
  secureEnv(user = 'sluice'): Record<string, string> {
    const secure = join(this.home, 'secure');
    const env = Object.fromEntries(
      readFileSync(join(this.home, 'secure.env'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    return {
      ...env,
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD_FILE: join(secure, `${user}.password`),
    };
  }

  /** Starts every node that is not running (all of them the first time). */
  up(): void {
    this.run('kafka-up.sh');
  }

  /** A controlled shutdown of every node. */
  down(): void {
    this.run('kafka-down.sh');
  }

  /** SIGKILLs node `node` (1-based): no controlled shutdown. */
  kill(node: number): void {
    this.run('kafka-kill.sh', ['--node', String(node)]);
  }

  destroy(): void {
    this.down();
    rmSync(this.home, { recursive: true, force: true });
  }

  private run(script: string, args: string[] = []): void {
    execFileSync('bash', [join(root, 'scripts/kafka', script), ...args], {
      env: {
        ...process.env,
        SLUICE_KAFKA_HOME: this.home,
        SLUICE_KAFKA_LIBS: join(root, '.local/kafka/libs'),
        KAFKA_PORT: String(this.port),
        KAFKA_CONTROLLER_PORT: String(this.port + 1),
        KAFKA_NODES: String(this.nodes),
        KAFKA_HEAP_MAX: this.nodes > 1 ? '384m' : '512m',
        ...this.env,
      },
      stdio: 'ignore',
    });
  }
}
