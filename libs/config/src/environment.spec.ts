import { IsInt, IsOptional } from 'class-validator';
import { Transform } from 'class-transformer';

import { ConfigurationError, integer, listOf, loadEnvironment, ServiceEnvironment } from './index';

class TestEnvironment extends ServiceEnvironment {
  @IsOptional()
  @Transform(integer)
  @IsInt({ message: 'PORT must be a whole number' })
  PORT: number = 80;
}

describe('loadEnvironment', () => {
  it('applies defaults, reads what is set and treats empty strings as unset', () => {
    const env = loadEnvironment(TestEnvironment, { PORT: '81', LOG_LEVEL: '', OTHER: 'x' });
    expect({ ...env }).toEqual({
      KAFKA_BROKERS: '127.0.0.1:9092',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      SLUICE_TOPIC_PREFIX: 'sluice',
      SOURCE_TOPICS: 'events',
      PORT: 81,
    });
  });

  it('lists every problem, the inherited variables included', () => {
    let error: unknown;
    try {
      loadEnvironment(TestEnvironment, { PORT: 'x', KAFKA_BROKERS: 'nohost', LOG_FORMAT: 'xml' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).problems).toEqual(
      expect.arrayContaining([
        'PORT must be a whole number',
        'KAFKA_BROKERS must be a comma-separated list of host:port',
        expect.stringContaining('LOG_FORMAT'),
      ]),
    );
  });

  it('splits lists', () => {
    expect(listOf(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
  });
});
