import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { postgresConnection } from './postgres-tls';

const URL_BASE = 'postgres://sluice@db.example:5432/sluice';
const caFile = join(mkdtempSync(join(tmpdir(), 'sluice-pg-tls-')), 'ca.pem');
writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

function connection(url: string, ca?: string) {
  const settings = postgresConnection(url, ca);
  if (!('connection' in settings)) throw new Error(settings.problems.join('; '));
  return settings.connection;
}

describe('postgresConnection', () => {
  it('takes sslmode out of the URL, keeping the other parameters', () => {
    expect(connection(`${URL_BASE}?sslmode=verify-full&application_name=admin`).url).toBe(
      `${URL_BASE}?application_name=admin`,
    );
    expect(connection(URL_BASE)).toEqual({ url: URL_BASE, ssl: false });
    expect(connection(`${URL_BASE}?sslmode=disable`).ssl).toBe(false);
  });

  it('means by each sslmode what libpq means', () => {
    expect(connection(`${URL_BASE}?sslmode=require`).ssl).toEqual({ rejectUnauthorized: false });
    // require with a root certificate checks the chain, as verify-ca.
    const requireWithCa = connection(`${URL_BASE}?sslmode=require`, caFile).ssl;
    expect(requireWithCa).toMatchObject({
      rejectUnauthorized: true,
      ca: expect.stringContaining('BEGIN'),
    });
    const verifyCa = connection(`${URL_BASE}?sslmode=verify-ca`, caFile).ssl;
    expect(verifyCa && verifyCa.checkServerIdentity?.('other.host', {} as never)).toBeUndefined();
    const verifyFull = connection(`${URL_BASE}?sslmode=verify-full`, caFile).ssl;
    expect(verifyFull).toMatchObject({ rejectUnauthorized: true });
    expect(verifyFull && 'checkServerIdentity' in verifyFull).toBe(false); // Node's host name check
    expect(connection(`${URL_BASE}?sslmode=verify-full`).ssl).toEqual({ rejectUnauthorized: true });
  });

  it('lists every problem: a mode that may fall back to plain text, an unreadable or unused CA file', () => {
    expect(
      postgresConnection(`${URL_BASE}?sslmode=prefer`, '/nonexistent/ca.pem').problems,
    ).toEqual([
      expect.stringContaining(
        'sslmode=prefer is not one of disable, require, verify-ca, verify-full',
      ),
      'DATABASE_CA_FILE /nonexistent/ca.pem cannot be read: ENOENT',
    ]);
    expect(postgresConnection(URL_BASE, caFile).problems).toEqual([
      "DATABASE_CA_FILE is set but DATABASE_URL's sslmode is disable (or absent): add sslmode=verify-full",
    ]);
    expect(postgresConnection(`${URL_BASE}?sslmode=verify-ca`, undefined).problems).toEqual([
      expect.stringContaining('sslmode=verify-ca needs DATABASE_CA_FILE'),
    ]);
    // Parameters node-postgres would let override the TLS options are refused.
    expect(
      postgresConnection(`${URL_BASE}?sslmode=verify-full&sslrootcert=/x.pem&ssl=0`, caFile)
        .problems,
    ).toEqual([
      "DATABASE_URL's ssl is not taken: TLS is set by sslmode and DATABASE_CA_FILE",
      "DATABASE_URL's sslrootcert is not taken: TLS is set by sslmode and DATABASE_CA_FILE",
    ]);
  });
});
