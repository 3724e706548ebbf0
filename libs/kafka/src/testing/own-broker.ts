import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The workspace root, from libs/kafka/src/testing (sources) or libs/kafka/dist/testing (built).
const root = resolve(__dirname, '../../../..');

/** A Kafka broker of the test's own (port, data dir), which it may stop and start at will. */
export class OwnBroker {
  private readonly home = mkdtempSync(join(tmpdir(), 'sluice-admin-broker-'));

  constructor(readonly port: number) {}

  /** The broker's data and logs (kept by `down`, removed by `destroy`). */
  get directory(): string {
    return this.home;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  up(): void {
    this.run('kafka-up.sh');
  }

  down(): void {
    this.run('kafka-down.sh');
  }

  destroy(): void {
    this.down();
    rmSync(this.home, { recursive: true, force: true });
  }

  private run(script: string): void {
    execFileSync('bash', [join(root, 'scripts/kafka', script)], {
      env: {
        ...process.env,
        SLUICE_KAFKA_HOME: this.home,
        SLUICE_KAFKA_LIBS: join(root, '.local/kafka/libs'),
        KAFKA_PORT: String(this.port),
        KAFKA_CONTROLLER_PORT: String(this.port + 1),
        KAFKA_HEAP_MAX: '512m',
      },
      stdio: 'ignore',
    });
  }
}
