export { freePort, sleep, until } from './waiting';
export type { UntilOptions } from './waiting';
export { logWarnings } from './log-warnings';
export { withoutEpoch } from './result-epochs';
export { TlsPostgres } from './tls-postgres';
