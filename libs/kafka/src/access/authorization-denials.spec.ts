import {
  authorizationDenial,
  KafkaAuthorizationError,
  namingDenied,
  onTopics,
  withDenialsNamed,
} from './authorization-denials';

const protocolError = (type: string) =>
  Object.assign(new Error('Not authorized'), { name: 'KafkaJSProtocolError', type });

describe('authorization denials', () => {
  it('finds the code in the error, what it wraps and what it aggregates', () => {
    expect(authorizationDenial(protocolError('GROUP_AUTHORIZATION_FAILED'))).toBe(
      'GROUP_AUTHORIZATION_FAILED',
    );
    const wrapped = {
      name: 'KafkaJSNumberOfRetriesExceeded',
      originalError: protocolError('TOPIC_AUTHORIZATION_FAILED'),
    };
    expect(authorizationDenial(wrapped)).toBe('TOPIC_AUTHORIZATION_FAILED');
    const aggregated = {
      errors: [new Error('other'), protocolError('CLUSTER_AUTHORIZATION_FAILED')],
    };
    expect(authorizationDenial(aggregated)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    expect(authorizationDenial(protocolError('NOT_LEADER_FOR_PARTITION'))).toBeUndefined();
    expect(authorizationDenial('text')).toBeUndefined();
  });

  it('names what the request asked for of the refused kind of resource', () => {
    const named = namingDenied(protocolError('TOPIC_AUTHORIZATION_FAILED'), {
      group: 'Read on group g',
      topic: onTopics('Write', ['a', 'b']),
    });
    expect(named).toBeInstanceOf(KafkaAuthorizationError);
    expect((named as KafkaAuthorizationError).message).toBe(
      'Kafka refused this client (TOPIC_AUTHORIZATION_FAILED): its principal needs Write on topics a, b (README, "Kafka ACLs")',
    );
    expect((named as KafkaAuthorizationError).retriable).toBe(false);
    // A kind the request did not name is still said.
    expect(
      (namingDenied(protocolError('CLUSTER_AUTHORIZATION_FAILED'), {}) as Error).message,
    ).toContain('needs access to a cluster the request did not name');
  });

  it('leaves other errors, and errors already named, as they are', async () => {
    const other = new Error('connection closed');
    expect(namingDenied(other, { topic: 'Read on topic a' })).toBe(other);
    const named = namingDenied(protocolError('GROUP_AUTHORIZATION_FAILED'), {
      group: 'Read on group inner',
    });
    expect(namingDenied(named, { group: 'Read on group outer' })).toBe(named);
    await expect(
      withDenialsNamed({ 'transactional id': 'Write on transactional id t' }, async () => {
        throw protocolError('TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
      }),
    ).rejects.toThrow('needs Write on transactional id t');
    await expect(withDenialsNamed({}, async () => 7)).resolves.toBe(7);
  });
});
