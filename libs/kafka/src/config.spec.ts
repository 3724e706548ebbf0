import { brokersFromEnv } from './config';

describe('brokersFromEnv', () => {
  it('defaults to the local broker', () => {
    expect(brokersFromEnv({})).toEqual(['127.0.0.1:9092']);
    expect(brokersFromEnv({ KAFKA_BROKERS: '  ' })).toEqual(['127.0.0.1:9092']);
  });

  it('splits a comma-separated list and trims it', () => {
    expect(brokersFromEnv({ KAFKA_BROKERS: 'a:9092, b:9093 ,' })).toEqual(['a:9092', 'b:9093']);
  });

  it('names a malformed value', () => {
    expect(() => brokersFromEnv({ KAFKA_BROKERS: 'localhost' })).toThrow(
      'KAFKA_BROKERS must be a comma-separated list of host:port, got "localhost"',
    );
  });
});
