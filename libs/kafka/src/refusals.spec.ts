import { isPermanentRefusal, refusalReason } from './refusals';

const protocol = (type: string, retriable: boolean) =>
  Object.assign(new Error(`the broker said ${type}`), { type, retriable });

describe('isPermanentRefusal', () => {
  it('finds a refusal inside the aggregate kafkajs throws for createTopics', () => {
    const aggregate = Object.assign(new Error('Topic creation errors'), {
      name: 'KafkaJSAggregateError',
      errors: [protocol('INVALID_TOPIC_EXCEPTION', false)],
    });
    expect(isPermanentRefusal(aggregate)).toBe(true);
    expect(refusalReason(aggregate)).toBe(
      'INVALID_TOPIC_EXCEPTION: the broker said INVALID_TOPIC_EXCEPTION',
    );
  });

  it('finds one wrapped by exhausted retries, and not a retriable or an unknown error', () => {
    expect(isPermanentRefusal({ originalError: protocol('MESSAGE_TOO_LARGE', false) })).toBe(true);
    expect(isPermanentRefusal(protocol('LEADER_NOT_AVAILABLE', true))).toBe(false);
    expect(isPermanentRefusal(protocol('TOPIC_AUTHORIZATION_FAILED', false))).toBe(false);
    expect(isPermanentRefusal(new Error('ECONNREFUSED'))).toBe(false);
  });
});

describe('isPermanentRefusal, for what a cluster mends', () => {
  it('does not refuse a replication factor the cluster lacks while a broker is down', () => {
    expect(isPermanentRefusal(protocol('INVALID_REPLICATION_FACTOR', false))).toBe(false);
  });

  it('refuses an aggregate only when every error in it is permanent', () => {
    const mixed = {
      errors: [protocol('INVALID_TOPIC_EXCEPTION', false), protocol('LEADER_NOT_AVAILABLE', true)],
    };
    expect(isPermanentRefusal(mixed)).toBe(false);
  });
});
