import { hostname } from 'node:os';

import { ConfigurationError, loadProcessorConfig } from './processor-config';

describe('loadProcessorConfig', () => {
  it('applies the docs/design.md §7 defaults', () => {
    expect(loadProcessorConfig({})).toEqual({
      kafkaBrokers: ['127.0.0.1:9092'],
      kafkaSecurity: {},
      sourceTopics: ['events'],
      consumerGroup: 'sluice-processor',
      processorId: hostname(),
      metricsPort: 9464,
      metricsToken: undefined,
      logLevel: 'info',
      logFormat: 'json',
      topicPrefix: 'sluice',
      commitIntervalMs: 100,
      quietCommitIntervalMs: 1000,
      processingGuarantee: 'exactly_once_v2',
      replicaTransactions: 1,
      sourcePartitions: 6,
      statsIntervalMs: 5000,
      sessionTimeoutMs: 30_000,
    });
  });

  it('never lets a quiet transaction commit sooner than any other', () => {
    expect(loadProcessorConfig({ QUIET_COMMIT_INTERVAL_MS: '100' })).toMatchObject({
      commitIntervalMs: 100,
      quietCommitIntervalMs: 100,
    });
    expect(loadProcessorConfig({ COMMIT_INTERVAL_MS: '5000' })).toMatchObject({
      commitIntervalMs: 5000,
      quietCommitIntervalMs: 5000,
    });
    expect(
      loadProcessorConfig({ COMMIT_INTERVAL_MS: '500', QUIET_COMMIT_INTERVAL_MS: '200' }),
    ).toMatchObject({ commitIntervalMs: 500, quietCommitIntervalMs: 500 });
    expect(() => loadProcessorConfig({ COMMIT_INTERVAL_MS: '40000' })).toThrow(
      'COMMIT_INTERVAL_MS must be at most 30000',
    );
    expect(() => loadProcessorConfig({ QUIET_COMMIT_INTERVAL_MS: '60000' })).toThrow(
      'QUIET_COMMIT_INTERVAL_MS must be at most 30000',
    );
  });

  it('takes either processing guarantee and refuses anything else', () => {
    expect(loadProcessorConfig({ PROCESSING_GUARANTEE: 'exactly_once' })).toMatchObject({
      processingGuarantee: 'exactly_once',
    });
    expect(() => loadProcessorConfig({ PROCESSING_GUARANTEE: 'at_least_once' })).toThrow(
      'PROCESSING_GUARANTEE must be one of exactly_once, exactly_once_v2',
    );
  });

  it('reads lists and numbers from the environment', () => {
    expect(
      loadProcessorConfig({
        SOURCE_TOPICS: 'orders, clicks',
        KAFKA_BROKERS: 'a:1,b:2',
        PROCESSOR_ID: 'processor-0',
        METRICS_PORT: '9500',
      }),
    ).toMatchObject({
      sourceTopics: ['orders', 'clicks'],
      kafkaBrokers: ['a:1', 'b:2'],
      processorId: 'processor-0',
      metricsPort: 9500,
    });
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      loadProcessorConfig({ METRICS_PORT: 'http', SOURCE_TOPICS: 'a b', COMMIT_INTERVAL_MS: '0' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).problems).toEqual(
      expect.arrayContaining([
        'METRICS_PORT must be a whole number',
        'SOURCE_TOPICS must be a comma-separated list of topic names',
        expect.stringContaining('COMMIT_INTERVAL_MS'),
      ]),
    );
  });
});
