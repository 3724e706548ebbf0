// Broker answers that no retry will change: the request itself is what the broker refuses (a
// topic name that collides with an existing one, a record over the size limit, a config the
// broker does not take). Whoever meets one stops retrying that request and reports it, so it
// never blocks what comes after it.
const PERMANENT = new Set([
  'INVALID_TOPIC_EXCEPTION',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'POLICY_VIOLATION',
  'INVALID_CONFIG',
]);
// Not here: INVALID_REPLICATION_FACTOR and INVALID_PARTITIONS, which a cluster answers while a
// broker is down (fewer brokers than the default replication), and mends when it is back.

interface ErrorLike {
  type?: unknown;
  errors?: unknown;
  originalError?: unknown;
  cause?: unknown;
}

/**
 * Whether `error` is a permanent refusal: its own type is one, or what it wraps is (kafkajs
 * wraps the last error when retries run out), or every error it aggregates is one (a retriable
 * one among them may yet pass, so the request is tried again).
 */
export function isPermanentRefusal(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > 4) return false;
  const e = error as ErrorLike;
  if (PERMANENT.has(String(e.type))) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0)
    return e.errors.every((inner) => isPermanentRefusal(inner, depth + 1));
  return [e.originalError, e.cause].some((inner) => isPermanentRefusal(inner, depth + 1));
}

/** The broker's words for a refusal: the nested error that says why, else the error's own. */
export function refusalReason(error: unknown): string {
  const e = error as ErrorLike & { message?: string };
  for (const inner of Array.isArray(e?.errors) ? e.errors : []) {
    const { type, message } = inner as { type?: string; message?: string };
    if (PERMANENT.has(String(type))) return `${type}: ${message ?? ''}`.trim();
  }
  return e?.type ? `${String(e.type)}: ${e.message ?? ''}` : String(e?.message ?? error);
}
