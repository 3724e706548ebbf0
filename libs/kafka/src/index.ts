export { brokersFromEnv, DEFAULT_KAFKA_BROKERS } from './config';
export { createKafka } from './client';
export {
  isSecurityRefusal,
  KafkaSecurityError,
  kafkaSecurityFromEnv,
  requireKafkaSecurity,
  SASL_MECHANISMS,
} from './security';
export type { KafkaSecurity, SaslMechanism } from './security';
export type { KafkaClientOptions } from './client';
export { ensureTopics } from './topics';
export { KeyPartitioner, keyHash, keyPartition, murmur2, placedPartition } from './key-partitioner';
export type { TopicSpec } from './topics';
export { groupOwner, scratchGroupId } from './access/scratch-groups';
export { readTopicToEnd } from './read-topic-to-end';
export type { ReadToEndOptions, TopicRecord } from './read-topic-to-end';
export {
  BROKER_RETRY,
  fetchTopicOffsets,
  isRetriable,
  KAFKAJS_BROKER_RETRY,
  retryBroker,
  retryRetriable,
} from './retry';
export { isPermanentRefusal, refusalReason } from './refusals';
export { fetchStableOffset, isUnstableOffsetCommit, offsetCommitPending } from './stable-offsets';
export type { CommittedOffset } from './stable-offsets';
export { startOffsets } from './start-offsets';
export type { StartPoint } from './start-offsets';
export { fetchPartitionEnds, OpenTransactionError, untilStableEnd } from './partition-ends';
export type { PartitionEnd } from './partition-ends';
export {
  endWithMarker,
  findOpenTransactions,
  findPendingOffsetCommits,
  MarkersUnderWayError,
  offsetsPartitionOf,
  transactionBegunBy,
  transactionEnded,
  transactionOutcome,
} from './open-transactions';
export type { OpenTransaction, TopicPartitions, TransactionOutcome } from './open-transactions';
export { assertPatchedKafkajs, UnpatchedKafkajsError } from './kafkajs/patched-kafkajs';
export { adminAcls, cliAcls, processorAcls, topicsJobAcls } from './access/acl-grants';
export type {
  AclGrant,
  AclOperation,
  AclResource,
  CliNames,
  InstallationNames,
  SluiceApp,
} from './access/acl-grants';
export { kafkaAclsCommand, kafkajsAclEntries, shellWord } from './access/acl-commands';
export type { KafkaAclsOptions } from './access/acl-commands';
export {
  authorizationDenial,
  KafkaAuthorizationError,
  namingDenied,
  onTopics,
  withDenialsNamed,
} from './access/authorization-denials';
export type { AskedFor, DeniedResource } from './access/authorization-denials';
