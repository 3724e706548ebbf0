// A PostgreSQL server of a test's own that takes TLS connections only (pg_hba: hostssl
// trust, hostnossl reject), with a CA and a server certificate for localhost and 127.0.0.1 made
// by openssl. Run as the `postgres` user when the tests run as root (initdb refuses root).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

function postgresBin(tool: string): string {
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = readdirSync(root).sort((a, b) => Number(a) - Number(b));
  } catch {
    return tool; // on the PATH, then
  }
  return versions.length === 0 ? tool : join(root, versions[versions.length - 1]!, 'bin', tool);
}

/** A CA, and (when `server`) a certificate it signs for localhost and 127.0.0.1. */
function makeCertificates(directory: string, name: string, server: boolean): void {
  const at = (file: string) => join(directory, file);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    at(`${name}.key`),
    '-out',
    at(`${name}.pem`),
  );
  if (!server) return;
  writeFileSync(at('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    at('server.key'),
    '-out',
    at('server.csr'),
  );
  openssl(
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at(`${name}.pem`),
    '-CAkey',
    at(`${name}.key`),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    at('server.ext'),
    '-out',
    at('server.crt'),
  );
}

export class TlsPostgres {
  readonly directory = mkdtempSync(join(tmpdir(), 'sluice-tls-pg-'));
  /** The CA that signed the server's certificate. */
  readonly caFile = join(this.directory, 'sluice-test-ca.pem');
  /** A CA that signed nothing of this server's. */
  readonly otherCaFile = join(this.directory, 'another-ca.pem');
  private readonly data = join(this.directory, 'data');
  private readonly asRoot = userInfo().uid === 0;

  constructor(readonly port: number) {}

  /** `postgres://postgres@127.0.0.1:<port>/<database>`, without TLS parameters. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  start(): void {
    makeCertificates(this.directory, 'sluice-test-ca', true);
    makeCertificates(this.directory, 'another-ca', false);
    chmodSync(this.directory, 0o755);
    if (this.asRoot) execFileSync('chown', ['-R', 'postgres:postgres', this.directory]);
    chmodSync(join(this.directory, 'server.key'), 0o600);
    this.run(postgresBin('initdb'), [
      '-D',
      this.data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
    ]);
    writeFileSync(
      join(this.data, 'postgresql.auto.conf'),
      [
        `port = ${this.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${this.directory}'`,
        'ssl = on',
        `ssl_cert_file = '${join(this.directory, 'server.crt')}'`,
        `ssl_key_file = '${join(this.directory, 'server.key')}'`,
        'fsync = off',
      ].join('\n') + '\n',
    );
    writeFileSync(
      join(this.data, 'pg_hba.conf'),
      [
        'local all all trust',
        'hostssl all all 127.0.0.1/32 trust',
        'hostnossl all all 127.0.0.1/32 reject',
      ].join('\n') + '\n',
    );
    if (this.asRoot) execFileSync('chown', ['-R', 'postgres:postgres', this.data]);
    this.run(postgresBin('pg_ctl'), [
      '-D',
      this.data,
      '-l',
      join(this.directory, 'server.log'),
      '-w',
      'start',
    ]);
  }

  stop(): void {
    try {
      this.run(postgresBin('pg_ctl'), ['-D', this.data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(this.directory, { recursive: true, force: true });
    }
  }

  private run(command: string, args: string[]): void {
    if (this.asRoot)
      execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  }
}
