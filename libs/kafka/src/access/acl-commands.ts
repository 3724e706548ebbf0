// The grants of acl-grants.ts as an operator applies them (kafka-acls commands) and as a client
// creates them (kafkajs' createAcls entries, one per operation).
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ResourcePatternTypes,
} from 'kafkajs';
import type { AclEntry } from 'kafkajs';

import type { AclGrant, AclOperation } from './acl-grants';

export interface KafkaAclsOptions {
  /** `--bootstrap-server`: an address, or a shell variable such as `$KAFKA_BROKERS`. */
  bootstrap: string;
  /** `--command-config`: the properties file of the operator's own secured client. */
  commandConfig?: string;
}

/** One `kafka-acls.sh --add` command for `principal` (`User:<name>`). */
export function kafkaAclsCommand(
  principal: string,
  grant: AclGrant,
  options: KafkaAclsOptions,
): string {
  const { resource } = grant;
  const words = [
    'kafka-acls.sh',
    `--bootstrap-server ${options.bootstrap}`,
    ...(options.commandConfig ? [`--command-config ${shellWord(options.commandConfig)}`] : []),
    '--add',
    `--${grant.permission}-principal ${shellWord(principal)}`,
    ...grant.operations.map((operation) => `--operation ${operation}`),
    resource.kind === 'cluster' ? '--cluster' : `--${resource.kind} ${shellWord(resource.name)}`,
    ...(resource.kind !== 'cluster' && resource.prefixed
      ? ['--resource-pattern-type prefixed']
      : []),
  ];
  return words.join(' ');
}

/** `word` as one shell word: as it is when it is plain, else single-quoted (mTLS principals). */
export function shellWord(word: string): string {
  return /^[\w.:/=@+,-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

const OPERATIONS: Record<AclOperation, AclOperationTypes> = {
  Read: AclOperationTypes.READ,
  Write: AclOperationTypes.WRITE,
  Create: AclOperationTypes.CREATE,
  Delete: AclOperationTypes.DELETE,
  Describe: AclOperationTypes.DESCRIBE,
  ClusterAction: AclOperationTypes.CLUSTER_ACTION,
};

const RESOURCES = {
  topic: AclResourceTypes.TOPIC,
  group: AclResourceTypes.GROUP,
  'transactional-id': AclResourceTypes.TRANSACTIONAL_ID,
  cluster: AclResourceTypes.CLUSTER,
} as const;

/** The grants as kafkajs `admin.createAcls` entries for `principal`. */
export function kafkajsAclEntries(principal: string, grants: readonly AclGrant[]): AclEntry[] {
  return grants.flatMap(({ resource, operations, permission }) =>
    operations.map((operation): AclEntry => ({
      resourceType: RESOURCES[resource.kind],
      resourceName: resource.kind === 'cluster' ? 'kafka-cluster' : resource.name,
      resourcePatternType:
        resource.kind !== 'cluster' && resource.prefixed
          ? ResourcePatternTypes.PREFIXED
          : ResourcePatternTypes.LITERAL,
      principal,
      host: '*',
      operation: OPERATIONS[operation],
      permissionType: permission === 'allow' ? AclPermissionTypes.ALLOW : AclPermissionTypes.DENY,
    })),
  );
}
