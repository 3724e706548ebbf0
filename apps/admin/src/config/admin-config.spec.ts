import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { digestOf } from '../auth/api-tokens';
import { ConfigurationError, loadAdminConfig } from './admin-config';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadAdminConfig(env);
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

function tokensFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-tokens-')), 'tokens.yaml');
  writeFileSync(file, text);
  return file;
}

const sha = (token: string) => digestOf(token).toString('hex');

const token = 'a-token-of-sixteen-chars';

describe('loadAdminConfig', () => {
  it('applies the docs/design.md §7 defaults', () => {
    const admin = { name: 'admin', role: 'admin', digest: digestOf(token) };
    expect(loadAdminConfig({ SLUICE_ADMIN_TOKEN: token })).toEqual({
      port: 3900,
      adminToken: admin,
      tokens: [admin],
      tokensFile: undefined,
      metricsToken: undefined,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/sluice',
      database: { url: 'postgres://postgres@127.0.0.1:5432/sluice', ssl: false },
      kafkaBrokers: ['127.0.0.1:9092'],
      kafkaSecurity: {},
      logLevel: 'info',
      logFormat: 'json',
      topicPrefix: 'sluice',
      sourceTopics: ['events'],
      outputPartitions: 6,
      statsStaleMs: 30_000,
    });
  });

  it('reads the environment', () => {
    const config = loadAdminConfig({
      SLUICE_ADMIN_TOKEN: token,
      ADMIN_PORT: '4000',
      KAFKA_BROKERS: 'a:1, b:2',
      DATABASE_URL: 'postgresql://u@db:5432/x?sslmode=disable',
    });
    expect(config).toMatchObject({
      port: 4000,
      kafkaBrokers: ['a:1', 'b:2'],
      databaseUrl: 'postgresql://u@db:5432/x?sslmode=disable',
    });
  });

  it('refuses to start without a token and lists every problem at once', () => {
    let error: unknown;
    try {
      loadAdminConfig({ ADMIN_PORT: 'http', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).problems).toEqual(
      expect.arrayContaining([
        'ADMIN_PORT must be a whole number',
        expect.stringContaining('SLUICE_ADMIN_TOKEN or SLUICE_API_TOKENS_FILE is required'),
        'DATABASE_URL must look like postgres://user@host:5432/database',
        expect.stringContaining('LOG_LEVEL must be one of'),
      ]),
    );
  });

  it('rejects a short token', () => {
    expect(() => loadAdminConfig({ SLUICE_ADMIN_TOKEN: 'short' })).toThrow(
      'SLUICE_ADMIN_TOKEN must be at least 16 characters',
    );
  });

  it('reads the tokens file beside SLUICE_ADMIN_TOKEN, or alone', () => {
    const file = tokensFile(
      `- { name: ada, token_sha256: ${sha('ada-token-0123456789')}, role: viewer }\n` +
        `- { name: bob, token_sha256: ${sha('bob-token-0123456789')}, role: editor }\n`,
    );
    const both = loadAdminConfig({ SLUICE_ADMIN_TOKEN: token, SLUICE_API_TOKENS_FILE: file });
    expect(both.tokens.map((t) => [t.name, t.role])).toEqual([
      ['admin', 'admin'],
      ['ada', 'viewer'],
      ['bob', 'editor'],
    ]);
    expect(both.tokens[1]!.digest.equals(digestOf('ada-token-0123456789'))).toBe(true);
    const alone = loadAdminConfig({ SLUICE_API_TOKENS_FILE: file });
    expect(alone.adminToken).toBeUndefined();
    expect(alone.tokens.map((t) => t.name)).toEqual(['ada', 'bob']);
  });

  it("lists every problem of the tokens file with the environment's", () => {
    const file = tokensFile(
      [
        `- { name: ada, token_sha256: ${sha('a')}, role: viewer }`,
        `- { name: ada, token_sha256: ${sha('b')}, role: root }`,
        `- { name: carl, token_sha256: NOT-HEX, role: admin, extra: 1 }`,
        `- { name: admin, token_sha256: ${sha('a')}, role: admin }`,
        `- just text`,
      ].join('\n'),
    );
    expect(problemsOf({ SLUICE_API_TOKENS_FILE: file, LOG_LEVEL: 'loud' })).toEqual([
      expect.stringContaining('LOG_LEVEL must be one of'),
      `${file}[1].name ada is used twice`,
      `${file}[1].role must be one of viewer, editor, admin`,
      `${file}[2].extra is not a known field`,
      `${file}[2].token_sha256 must be 64 lowercase hex digits (sha256sum of the token)`,
      `${file}[3].token_sha256 is the digest of another entry`,
      `${file}[4] must be a mapping with name, token_sha256 and role`,
    ]);
    expect(problemsOf({ SLUICE_API_TOKENS_FILE: '/nonexistent/tokens.yaml' })).toEqual([
      'SLUICE_API_TOKENS_FILE /nonexistent/tokens.yaml cannot be read: ENOENT',
    ]);
    expect(problemsOf({ SLUICE_API_TOKENS_FILE: tokensFile('{ not: a list }') })).toEqual([
      expect.stringContaining('must be a YAML list'),
    ]);
  });

  it("refuses a file entry named as SLUICE_ADMIN_TOKEN's", () => {
    const file = tokensFile(`- { name: admin, token_sha256: ${sha('x')}, role: viewer }\n`);
    expect(problemsOf({ SLUICE_ADMIN_TOKEN: token, SLUICE_API_TOKENS_FILE: file })).toEqual([
      `${file}: the name admin is SLUICE_ADMIN_TOKEN's`,
    ]);
  });
});
