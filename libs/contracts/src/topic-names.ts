// Topic names as Kafka checks them (docs/design.md §5): a definition names topics (its output,
// enrich's lookup tables) and makes others (`<output>.late`, the internal repartition and
// changelog topics); each must be a name the broker takes, and none may be one the pipeline
// must not write (Sluice's internal topics, Kafka's, or the processors' own sources).
import { changelogTopic, internalTopics, lateTopic, repartitionTopic } from './topics';

/** Kafka's limit (`Topic.MAX_NAME_LENGTH`). */
export const MAX_TOPIC_NAME_LENGTH = 249;

const LEGAL = /^[a-zA-Z0-9._-]+$/;
const UUID_SEGMENT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why Kafka would refuse `name` as a topic name, or undefined if it would take it. */
export function topicNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name === '.' || name === '..') return 'cannot be "." or ".." (Kafka refuses them)';
  if (!LEGAL.test(name))
    return 'must be a Kafka topic name: letters, digits, `.`, `_` and `-` only';
  if (name.length > MAX_TOPIC_NAME_LENGTH)
    return `must be at most ${MAX_TOPIC_NAME_LENGTH} characters (Kafka's limit), not ${name.length}`;
  return undefined;
}

/** Why a pipeline may not write to `name`, or undefined if it may. */
export function reservedTopicProblem(
  name: string,
  topicPrefix: string,
  sourceTopics: readonly string[],
): string | undefined {
  const internal = internalTopics(topicPrefix);
  if (name === internal.pipelines || name === internal.stats || name === internal.dlq)
    return `is Sluice's internal topic ${name}`;
  // The prefix may hold dots itself: what follows it decides.
  const rest = name.startsWith(`${topicPrefix}.`)
    ? name.slice(topicPrefix.length + 1).split('.')
    : [];
  if (rest.length >= 2 && UUID_SEGMENT.test(rest[0]!))
    return `is a pipeline's internal topic (${topicPrefix}.<id>.*)`;
  if (name.startsWith('__')) return "is reserved for Kafka's internal topics (names starting __)";
  if (sourceTopics.includes(name))
    return 'is a source topic of the processors: the pipeline would read its own results (a feedback loop)';
  return undefined;
}

/** The topics a pipeline makes besides its output, each with the field it derives from. */
export function derivedTopics(
  pipelineId: string,
  output: string,
  stateful: boolean,
  topicPrefix: string,
): Array<{ topic: string; from: 'output' | 'id' }> {
  const topics: Array<{ topic: string; from: 'output' | 'id' }> = [
    { topic: lateTopic(output), from: 'output' },
  ];
  if (stateful) {
    topics.push(
      { topic: repartitionTopic(pipelineId, topicPrefix), from: 'id' },
      { topic: changelogTopic(pipelineId, topicPrefix), from: 'id' },
    );
  }
  return topics;
}
