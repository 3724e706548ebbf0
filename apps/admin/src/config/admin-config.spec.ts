import { ConfigurationError, loadAdminConfig } from './admin-config';

const token = 'a-token-of-sixteen-chars';

describe('loadAdminConfig', () => {
  it('applies the docs/design.md §7 defaults', () => {
    expect(loadAdminConfig({ SLUICE_ADMIN_TOKEN: token })).toEqual({
      port: 3900,
      adminToken: token,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/sluice',
      kafkaBrokers: ['127.0.0.1:9092'],
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
        expect.stringContaining('SLUICE_ADMIN_TOKEN is required'),
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
});
