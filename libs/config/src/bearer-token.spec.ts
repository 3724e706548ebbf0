import { bearerMatches, bearerToken, tokenDigest } from './bearer-token';

describe('bearer tokens', () => {
  const expected = tokenDigest('a-metrics-token-of-32-characters');

  it('accepts exactly the token whose digest is known, in a Bearer header', () => {
    expect(bearerMatches('Bearer a-metrics-token-of-32-characters', expected)).toBe(true);
    expect(bearerMatches('bearer   a-metrics-token-of-32-characters ', expected)).toBe(true);
    expect(bearerMatches('Bearer a-metrics-token-of-32-characterz', expected)).toBe(false);
    expect(bearerMatches('Bearer a-metrics-token', expected)).toBe(false);
    expect(bearerMatches('Basic a-metrics-token-of-32-characters', expected)).toBe(false);
    expect(bearerMatches(undefined, expected)).toBe(false);
    expect(bearerMatches(['Bearer a-metrics-token-of-32-characters'], expected)).toBe(false);
  });

  it('reads no token from a header with two', () => {
    expect(bearerToken('Bearer one two')).toBeUndefined();
  });
});
