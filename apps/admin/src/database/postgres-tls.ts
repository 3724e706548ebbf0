// TLS to PostgreSQL, as libpq's `sslmode` means it (README, Security): node-postgres reads
// `sslmode` from a connection string with meanings of its own (its `require` verifies the
// certificate, libpq's does not), so the admin takes it out of the URL and builds the TLS
// options itself, with DATABASE_CA_FILE as the trusted root.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

const MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
const OVERRIDING_PARAMETERS = [
  'ssl',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'sslpassword',
  'uselibpqcompat',
];
export type SslMode = (typeof MODES)[number];

export interface PostgresConnection {
  /** DATABASE_URL without the TLS parameters the admin handles itself. */
  url: string;
  ssl: false | ConnectionOptions;
}

/** The URL's sslmode and DATABASE_CA_FILE as one connection's settings, or every problem. */
export function postgresConnection(
  databaseUrl: string,
  caFile: string | undefined,
): { connection: PostgresConnection; problems: [] } | { problems: string[] } {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return { problems: ['DATABASE_URL must look like postgres://user@host:5432/database'] };
  }
  const problems: string[] = [];
  const written = url.searchParams.get('sslmode');
  url.searchParams.delete('sslmode');
  const mode = (written ?? 'disable') as SslMode;
  if (!(MODES as readonly string[]).includes(mode)) {
    problems.push(
      `DATABASE_URL's sslmode=${written} is not one of ${MODES.join(', ')} (allow and prefer could fall back to an unencrypted connection without a word)`,
    );
  }
  // node-postgres would let these override the TLS options built here.
  for (const parameter of OVERRIDING_PARAMETERS) {
    if (url.searchParams.has(parameter))
      problems.push(
        `DATABASE_URL's ${parameter} is not taken: TLS is set by sslmode and DATABASE_CA_FILE`,
      );
  }
  if (mode === 'verify-ca' && caFile === undefined)
    problems.push(
      'sslmode=verify-ca needs DATABASE_CA_FILE: against the system CAs without the host name check, any publicly trusted certificate would pass (use verify-full)',
    );
  let ca: string | undefined;
  if (caFile !== undefined) {
    if (mode === 'disable')
      problems.push(
        "DATABASE_CA_FILE is set but DATABASE_URL's sslmode is disable (or absent): add sslmode=verify-full",
      );
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      problems.push(`DATABASE_CA_FILE ${caFile} cannot be read: ${reason}`);
    }
  }
  if (problems.length > 0) return { problems };
  return { connection: { url: url.toString(), ssl: tlsOptions(mode, ca) }, problems: [] };
}

function tlsOptions(mode: SslMode, ca: string | undefined): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
      return false;
    case 'require':
      // libpq: encrypted, the certificate unchecked, unless a root certificate is given (then
      // as verify-ca).
      return ca === undefined ? { rejectUnauthorized: false } : tlsOptions('verify-ca', ca);
    case 'verify-ca':
      // The chain is checked, the host name is not.
      return {
        ...(ca ? { ca } : {}),
        rejectUnauthorized: true,
        checkServerIdentity: () => undefined,
      };
    case 'verify-full':
      return { ...(ca ? { ca } : {}), rejectUnauthorized: true };
  }
}
