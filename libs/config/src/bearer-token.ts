// Bearer tokens known by their SHA-256 digest: a presented token is digested and compared with
// the known digest in constant time, so how much of it was right never shows in the time taken.
import { createHash, timingSafeEqual } from 'node:crypto';

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** Whether the header carries the token whose digest is `expected`. */
export function bearerMatches(header: string | string[] | undefined, expected: Buffer): boolean {
  const token = bearerToken(header);
  return token !== undefined && timingSafeEqual(tokenDigest(token), expected);
}
