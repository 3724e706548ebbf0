/** Broker addresses from `KAFKA_BROKERS` (comma-separated), docs/design.md §7. */
export const DEFAULT_KAFKA_BROKERS = '127.0.0.1:9092';

export function brokersFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env['KAFKA_BROKERS']?.trim() || DEFAULT_KAFKA_BROKERS;
  const brokers = raw
    .split(',')
    .map((broker) => broker.trim())
    .filter((broker) => broker.length > 0);
  const malformed = brokers.filter((broker) => !/^[^\s:]+:\d{1,5}$/.test(broker));
  if (brokers.length === 0 || malformed.length > 0) {
    throw new Error(
      `KAFKA_BROKERS must be a comma-separated list of host:port, got ${JSON.stringify(raw)}`,
    );
  }
  return brokers;
}
