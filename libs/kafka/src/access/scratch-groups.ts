// Every consumer group a Sluice app uses is named under its owner's name, so that one prefixed
// ACL on that name covers them all (README, "Kafka ACLs"): a processor's groups under its
// CONSUMER_GROUP, the admin's under `<SLUICE_TOPIC_PREFIX>.admin`, the CLI's under
// `<SLUICE_TOPIC_PREFIX>.cli`. Scratch groups (one read of a topic to its end, a follower, the
// admin's stats, the CLI's tail) are deleted when done where they can be (the tail's, which
// commits nothing, is left to expire).
import { randomUUID } from 'node:crypto';

/** The name the admin's or the CLI's consumer groups are under. */
export function groupOwner(app: 'admin' | 'cli', topicPrefix: string): string {
  return `${topicPrefix}.${app}`;
}

/** A scratch group of `owner` for one `purpose`: `<owner>.<purpose>.<random>`. */
export function scratchGroupId(owner: string, purpose: string): string {
  return `${owner}.${purpose}.${randomUUID()}`;
}
