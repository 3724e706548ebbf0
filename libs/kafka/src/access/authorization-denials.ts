// Kafka answers a principal that lacks an ACL with `<RESOURCE>_AUTHORIZATION_FAILED`, naming no
// resource (and kafkajs adds none). The code that asked knows what it asked for: it names it
// here, so that the line says which grant is missing (README, "Kafka ACLs").

export type DeniedResource = 'topic' | 'group' | 'transactional id' | 'cluster';

const RESOURCE_OF_CODE: Record<string, DeniedResource> = {
  TOPIC_AUTHORIZATION_FAILED: 'topic',
  GROUP_AUTHORIZATION_FAILED: 'group',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'transactional id',
  CLUSTER_AUTHORIZATION_FAILED: 'cluster',
};

/** What a request needs, per kind of resource: `Read on group g`, say. */
export type AskedFor = Partial<Record<DeniedResource, string>>;

/** Kafka refused the principal a resource; the message names what it needs. */
export class KafkaAuthorizationError extends Error {
  override readonly name = 'KafkaAuthorizationError';
  /** Not retriable: nothing but a grant changes this answer. */
  readonly retriable = false;

  constructor(
    readonly code: string,
    readonly resource: DeniedResource,
    message: string,
    readonly originalError: unknown,
  ) {
    super(message);
  }
}

interface ErrorLike {
  type?: unknown;
  errors?: unknown;
  originalError?: unknown;
  cause?: unknown;
}

/** The authorization code `error` carries (itself, what it wraps, or what it aggregates). */
export function authorizationDenial(error: unknown, depth = 0): string | undefined {
  if (error === null || typeof error !== 'object' || depth > 6) return undefined;
  const e = error as ErrorLike;
  if (typeof e.type === 'string' && e.type in RESOURCE_OF_CODE) return e.type;
  const inner = [...(Array.isArray(e.errors) ? e.errors : []), e.originalError, e.cause];
  for (const link of inner) {
    const code = authorizationDenial(link, depth + 1);
    if (code) return code;
  }
  return undefined;
}

/** `error` as a KafkaAuthorizationError naming what `asked` says, or `error` itself. */
export function namingDenied(error: unknown, asked: AskedFor): unknown {
  if (error instanceof KafkaAuthorizationError) return error;
  const code = authorizationDenial(error);
  if (code === undefined) return error;
  const resource = RESOURCE_OF_CODE[code]!;
  const needs = asked[resource] ?? `access to a ${resource} the request did not name`;
  return new KafkaAuthorizationError(
    code,
    resource,
    `Kafka refused this client (${code}): its principal needs ${needs} (README, "Kafka ACLs")`,
    error,
  );
}

/** Runs `request`, naming what `asked` says if Kafka refuses it for want of an ACL. */
export async function withDenialsNamed<T>(asked: AskedFor, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw namingDenied(error, asked);
  }
}

/** `Read on topic a` or `Read on topics a, b`. */
export function onTopics(operations: string, topics: readonly string[]): string {
  return `${operations} on topic${topics.length === 1 ? '' : 's'} ${topics.join(', ')}`;
}
