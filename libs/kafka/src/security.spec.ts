import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isSecurityRefusal, kafkaSecurityFromEnv } from './security';

const folder = mkdtempSync(join(tmpdir(), 'sluice-kafka-security-'));
const file = (name: string, text: string) => {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
};
const ca = file('ca.pem', 'CA PEM');
const cert = file('client.pem', 'CERT PEM');
const key = file('client.key', 'KEY PEM');
const passwordFile = file('password', 's3cret-from-a-file\n');

function security(env: NodeJS.ProcessEnv) {
  const read = kafkaSecurityFromEnv(env);
  if (!('security' in read)) throw new Error(read.problems.join('; '));
  return read.security;
}

describe('kafkaSecurityFromEnv', () => {
  it('is plaintext without a setting', () => {
    expect(security({})).toEqual({});
    expect(security({ KAFKA_SSL: 'false' })).toEqual({});
  });

  it('reads TLS: the CA, and a client certificate for mTLS', () => {
    expect(security({ KAFKA_SSL: 'true' })).toEqual({ ssl: true });
    expect(security({ KAFKA_SSL: 'TRUE', KAFKA_SSL_CA_FILE: ca })).toEqual({
      ssl: { ca: 'CA PEM' },
    });
    expect(
      security({
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: ca,
        KAFKA_SSL_CERT_FILE: cert,
        KAFKA_SSL_KEY_FILE: key,
      }),
    ).toEqual({ ssl: { ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' } });
  });

  it('reads SASL, the password from the environment or a mounted file', () => {
    expect(
      security({
        KAFKA_SSL: 'true',
        KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
        KAFKA_SASL_USERNAME: 'sluice',
        KAFKA_SASL_PASSWORD_FILE: passwordFile,
      }).sasl,
    ).toEqual({ mechanism: 'scram-sha-512', username: 'sluice', password: 's3cret-from-a-file' });
    expect(
      security({
        KAFKA_SASL_MECHANISM: 'scram-sha-256',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      }),
    ).toEqual({ sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' } });
  });

  it('lists every problem at once, and never a secret', () => {
    const read = kafkaSecurityFromEnv({
      KAFKA_SSL: 'yes',
      KAFKA_SSL_CERT_FILE: cert,
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_PASSWORD: 'hunter2-the-secret',
      KAFKA_SASL_PASSWORD_FILE: '/nonexistent/password',
    });
    expect(read.problems).toEqual([
      'KAFKA_SSL must be true or false, not "yes"',
      'KAFKA_SSL_CERT_FILE is set but KAFKA_SSL is not true',
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (mTLS needs both)',
      'KAFKA_SASL_MECHANISM=plain sends the password as it is: it needs KAFKA_SSL=true',
      'KAFKA_SASL_USERNAME is required with plain',
      'KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE: set one of them',
    ]);
    expect(JSON.stringify(read.problems)).not.toContain('hunter2');
    expect(kafkaSecurityFromEnv({ KAFKA_SASL_MECHANISM: 'gssapi' }).problems).toEqual([
      'KAFKA_SASL_MECHANISM must be one of plain, scram-sha-256, scram-sha-512',
    ]);
    expect(kafkaSecurityFromEnv({ KAFKA_SASL_USERNAME: 'u' }).problems).toEqual([
      'KAFKA_SASL_USERNAME and the password need KAFKA_SASL_MECHANISM',
    ]);
    expect(
      kafkaSecurityFromEnv({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/nonexistent/ca.pem' })
        .problems,
    ).toEqual(['KAFKA_SSL_CA_FILE /nonexistent/ca.pem cannot be read: ENOENT']);
  });
});

describe('isSecurityRefusal', () => {
  it('knows a failed SASL authentication and an untrusted certificate, wrapped or not', () => {
    expect(isSecurityRefusal({ name: 'KafkaJSSASLAuthenticationError' })).toBe(true);
    expect(
      isSecurityRefusal({ name: 'KafkaJSConnectionError', code: 'SELF_SIGNED_CERT_IN_CHAIN' }),
    ).toBe(true);
    expect(
      isSecurityRefusal({
        name: 'KafkaJSNumberOfRetriesExceeded',
        originalError: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
      }),
    ).toBe(true);
    expect(isSecurityRefusal({ name: 'KafkaJSConnectionError', code: 'ECONNREFUSED' })).toBe(false);
    expect(isSecurityRefusal(undefined)).toBe(false);
  });
});
