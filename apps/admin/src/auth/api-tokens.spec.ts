import { timingSafeEqual } from 'node:crypto';

import fc from 'fast-check';

import { allows, digestOf, findToken, ROLES } from './api-tokens';
import type { ApiToken, Role } from './api-tokens';

const tokens: ApiToken[] = [
  { name: 'ada', role: 'viewer', digest: digestOf('ada-secret-token-1') },
  { name: 'bob', role: 'editor', digest: digestOf('bob-secret-token-2') },
  { name: 'cy', role: 'admin', digest: digestOf('cy-secret-token-3') },
];

describe('findToken', () => {
  it('finds the token whose digest matches, and no other', () => {
    expect(findToken(tokens, 'bob-secret-token-2')?.name).toBe('bob');
    expect(findToken(tokens, 'bob-secret-token-')).toBeUndefined();
    expect(findToken(tokens, 'bob-secret-token-22')).toBeUndefined();
    expect(findToken([], 'anything')).toBeUndefined();
  });

  // What makes the comparison constant-time: the work done for a presented token is the same
  // whichever token (if any) it matches and however much of one it shares, since every known
  // digest is compared, always as two 32-byte digests, with timingSafeEqual.
  it('compares every known digest, 32 bytes each, whatever is presented', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.constantFrom('ada-secret-token-1', 'bob-secret-token-2', 'cy-secret-token-3'),
          fc.string().map((tail) => `ada-secret-token-1${tail}`),
          fc.nat({ max: 18 }).map((n) => 'ada-secret-token-1'.slice(0, n)),
        ),
        (presented) => {
          const compared: Array<[number, number]> = [];
          findToken(tokens, presented, (a, b) => {
            compared.push([a.length, b.length]);
            return timingSafeEqual(a, b);
          });
          expect(compared).toEqual(tokens.map(() => [32, 32]));
        },
      ),
    );
  });
});

describe('allows', () => {
  it('lets each role do what the roles before it may', () => {
    const table = ROLES.map((role) => ROLES.map((required) => allows(role, required)));
    expect(table).toEqual([
      [true, false, false],
      [true, true, false],
      [true, true, true],
    ]);
    const admin: Role = 'admin';
    expect(allows(admin, 'viewer')).toBe(true);
  });
});
