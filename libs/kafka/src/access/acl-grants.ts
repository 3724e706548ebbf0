// The Kafka ACLs each Sluice app needs, and nothing more (README, "Kafka ACLs"): one list that
// the README's kafka-acls commands, `sluice acls` and the least-privilege test all render, so
// the documented grants are the tested ones. Pure: names in, grants out.
import { changelogTopic, internalTopics, lateTopic } from '@sluice/contracts';

import { groupOwner } from './scratch-groups';

export type AclOperation = 'Read' | 'Write' | 'Create' | 'Delete' | 'Describe' | 'ClusterAction';

export type AclResource =
  | { kind: 'topic' | 'group' | 'transactional-id'; name: string; prefixed: boolean }
  | { kind: 'cluster' };

export interface AclGrant {
  resource: AclResource;
  operations: readonly AclOperation[];
  /** A deny takes precedence over any allow: it carves a name out of a prefixed grant. */
  permission: 'allow' | 'deny';
  why: string;
  /** Used only on a rare path; without it that path fails with an authorization error. */
  optional?: true;
}

export interface InstallationNames {
  /** SLUICE_TOPIC_PREFIX. */
  topicPrefix: string;
  /** The processors' CONSUMER_GROUP (a processor group). */
  consumerGroup: string;
  /** The processors' SOURCE_TOPICS. */
  sourceTopics: readonly string[];
  /** The pipelines' output topics (each with its `.late` topic). */
  outputs: readonly string[];
  /** Enrich's lookup tables. */
  tables?: readonly string[];
}

export type SluiceApp = 'processor' | 'admin' | 'cli' | 'topics-job';

const topic = (name: string, prefixed = false): AclResource => ({ kind: 'topic', name, prefixed });
const group = (name: string, prefixed = false): AclResource => ({ kind: 'group', name, prefixed });

function allow(resource: AclResource, operations: AclOperation[], why: string): AclGrant {
  return { resource, operations, permission: 'allow', why };
}

/** Every output with its `.late` topic, each a literal name. */
function outputTopics(names: InstallationNames): string[] {
  return names.outputs.flatMap((output) => [output, lateTopic(output)]);
}

export function processorAcls(names: InstallationNames): AclGrant[] {
  const { topicPrefix, consumerGroup } = names;
  const internal = internalTopics(topicPrefix);
  // `<prefix>.<pipeline id>.changelog` and `.repartition`: only the prefix is known in advance.
  const pipelineTopics = changelogTopic('', topicPrefix).replace(/\.changelog$/, '');
  return [
    ...names.sourceTopics.map((name) =>
      allow(topic(name), ['Read', 'Describe'], 'a source topic: consumed by the group'),
    ),
    allow(
      topic(pipelineTopics, true),
      ['Read', 'Write', 'Create', 'Describe'],
      "the definitions (read), stats and dead letters (written), and each pipeline's repartition and changelog topics (created, written, read)",
    ),
    {
      resource: topic(internal.pipelines),
      operations: ['Write'],
      permission: 'deny',
      why: 'only the admin writes definitions',
    },
    ...outputTopics(names).map((name) =>
      allow(
        topic(name),
        ['Write', 'Read', 'Describe'],
        'an output: written in transactions; read to find a transaction of its own left open',
      ),
    ),
    ...(names.tables ?? []).map((name) =>
      allow(
        topic(name),
        ['Read', 'Describe', 'Create'],
        'an enrich lookup table: read whole; created empty when nobody has written it yet',
      ),
    ),
    allow(
      group(consumerGroup),
      ['Read'],
      "the processor group: joined, and its offsets committed in the tasks' transactions",
    ),
    allow(
      group(`${consumerGroup}.`, true),
      ['Read', 'Delete'],
      'scratch groups of restores and followers, deleted when done',
    ),
    allow(
      { kind: 'transactional-id', name: `${consumerGroup}.`, prefixed: true },
      ['Write'],
      "the transactional producers: a task's (<group>.<topic>.<partition>) or, under exactly_once_v2, the replica's (<group>.replica/<PROCESSOR_ID>/<n>)",
    ),
    {
      ...allow(
        { kind: 'cluster' },
        ['ClusterAction'],
        'WriteTxnMarkers: ends a transaction of its own that its coordinator left open after a broker fault (README, Known issues); without it that task fails, naming this grant, until kafka-transactions abort ends the transaction',
      ),
      optional: true,
    },
    {
      ...allow(
        topic('__consumer_offsets'),
        ['Read', 'Describe'],
        "DescribeProducers on the group's offsets partition: finds an offset commit of its own that its coordinator left pending after a broker fault, to end it with the grant above; without it that transaction fails, naming this grant, and its tasks are retried",
      ),
      optional: true,
    },
  ];
}

export function adminAcls(names: Pick<InstallationNames, 'topicPrefix' | 'outputs'>): AclGrant[] {
  const internal = internalTopics(names.topicPrefix);
  return [
    allow(
      topic(internal.pipelines),
      ['Read', 'Write', 'Describe', 'Create'],
      'the definitions: written from the outbox, read back to reconcile',
    ),
    allow(topic(internal.stats), ['Read', 'Describe', 'Create'], "the processors' stats"),
    allow(topic(internal.dlq), ['Describe', 'Create'], 'the dead letters: created at start-up'),
    ...outputTopics({ ...names, consumerGroup: '', sourceTopics: [] }).map((name) =>
      allow(topic(name), ['Create', 'Describe'], 'an output: created with the pipeline'),
    ),
    allow(
      group(`${groupOwner('admin', names.topicPrefix)}.`, true),
      ['Read', 'Delete'],
      'scratch groups of the stats follower and the reconciler, deleted when done',
    ),
  ];
}

/** The topics Job (k8s/base/topics-job.sh): it makes the internal and source topics. */
export function topicsJobAcls(
  names: Pick<InstallationNames, 'topicPrefix' | 'sourceTopics'>,
): AclGrant[] {
  const internal = internalTopics(names.topicPrefix);
  return [internal.pipelines, internal.stats, internal.dlq, ...names.sourceTopics].map((name) =>
    allow(topic(name), ['Create', 'Describe'], 'made by the topics Job if missing'),
  );
}

export interface CliNames {
  topicPrefix: string;
  /** Topics `sluice produce` writes (sources, lookup tables). */
  produces: readonly string[];
  /** Topics `sluice tail` reads (outputs, say). */
  tails: readonly string[];
}

/** The CLI's `produce` and `tail` talk to Kafka; every other command goes through the admin. */
export function cliAcls(names: CliNames): AclGrant[] {
  return [
    ...names.produces.map((name) =>
      allow(
        topic(name),
        ['Write', 'Describe'],
        '`sluice produce` (Create too if it should make the topic)',
      ),
    ),
    ...names.tails.map((name) => allow(topic(name), ['Read', 'Describe'], '`sluice tail`')),
    allow(
      group(`${groupOwner('cli', names.topicPrefix)}.`, true),
      ['Read'],
      "`sluice tail`'s scratch groups (they never commit)",
    ),
  ];
}
