// The admin API's tokens and roles (README, Security). A token is known by its SHA-256 digest
// only, so the tokens file holds no secret; a presented token is digested once and compared
// with every known digest in constant time, so neither which token matched nor how much of one
// did shows in the response time.
import { timingSafeEqual } from 'node:crypto';

import { tokenDigest } from '@sluice/config';
import { parse } from 'yaml';

/** Each role may do what the ones before it may, and more. */
export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiToken {
  /** Who holds it: the actor the version history records. */
  name: string;
  role: Role;
  /** SHA-256 of the token. */
  digest: Buffer;
}

/** What SLUICE_ADMIN_TOKEN is called in the version history. */
export const ADMIN_TOKEN_NAME = 'admin';

export const digestOf = tokenDigest;

export function allows(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/**
 * The token whose digest is the presented token's, or undefined. Every known digest is
 * compared, whichever matches: the time taken depends on how many tokens there are, never on
 * the presented one (its digest always has 32 bytes).
 */
export function findToken(
  tokens: readonly ApiToken[],
  presented: string,
  equal: (a: Buffer, b: Buffer) => boolean = timingSafeEqual,
): ApiToken | undefined {
  const digest = digestOf(presented);
  let found: ApiToken | undefined;
  for (const token of tokens) {
    if (equal(digest, token.digest) && found === undefined) found = token;
  }
  return found;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Reads SLUICE_API_TOKENS_FILE: a YAML list of `{ name, token_sha256, role }`. Every problem is
 * reported, each with the entry it is in; names and digests must be unique.
 */
export function parseTokensFile(
  text: string,
  file: string,
): { tokens: ApiToken[]; problems: [] } | { tokens?: undefined; problems: string[] } {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    return { problems: [`${file} is not YAML: ${(error as Error).message.split('\n')[0]}`] };
  }
  if (!Array.isArray(document))
    return { problems: [`${file} must be a YAML list of { name, token_sha256, role }`] };
  const problems: string[] = [];
  const tokens: ApiToken[] = [];
  const names = new Set<string>();
  const digests = new Set<string>();
  document.forEach((entry: unknown, index) => {
    const at = `${file}[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`${at} must be a mapping with name, token_sha256 and role`);
      return;
    }
    const { name, token_sha256: sha, role, ...rest } = entry as Record<string, unknown>;
    const before = problems.length;
    for (const field of Object.keys(rest)) problems.push(`${at}.${field} is not a known field`);
    if (typeof name !== 'string' || !NAME.test(name))
      problems.push(`${at}.name must be 1-100 letters, digits, '.', '_', '@' or '-'`);
    else if (names.has(name)) problems.push(`${at}.name ${name} is used twice`);
    if (typeof sha !== 'string' || !SHA256_HEX.test(sha))
      problems.push(`${at}.token_sha256 must be 64 lowercase hex digits (sha256sum of the token)`);
    else if (digests.has(sha)) problems.push(`${at}.token_sha256 is the digest of another entry`);
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role))
      problems.push(`${at}.role must be one of ${ROLES.join(', ')}`);
    if (problems.length > before) return;
    names.add(name as string);
    digests.add(sha as string);
    tokens.push({
      name: name as string,
      role: role as Role,
      digest: Buffer.from(sha as string, 'hex'),
    });
  });
  return problems.length > 0 ? { problems } : { tokens, problems: [] };
}
