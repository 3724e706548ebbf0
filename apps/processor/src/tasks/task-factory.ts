// Which task a partition the group assigns gets: a source topic's partition runs the pipelines
// that read it (SourceTask); a pipeline's repartition partition holds its windows' state
// (StatefulTask); anything else (a pipeline deleted meanwhile) gets none.
import type { GlobalTables } from '../tables/global-tables';
import type { PipelineSet } from '../pipelines/pipeline-set';
import type { PartitionMemory } from './committed-offset';
import { SourceTask } from './source-task';
import { StatefulTask } from './stateful-task';
import type { Task } from './task';
import type { TaskContext } from './task-context';

export interface TaskFactoryOptions {
  context: TaskContext;
  pipelines: PipelineSet;
  dlqTopic: string;
  lookups: GlobalTables;
  isSourceTopic: (topic: string) => boolean;
  /** The runs of every pipeline the replica knows, running or not (of those reading `topic`). */
  knownRuns: (topic?: string) => ReadonlySet<string>;
}

export function taskFactory(options: TaskFactoryOptions) {
  const { context, pipelines, dlqTopic, lookups, isSourceTopic, knownRuns } = options;
  return (topic: string, partition: number, memory: PartitionMemory): Task | undefined => {
    if (isSourceTopic(topic))
      return new SourceTask(
        topic,
        partition,
        { ...context, pipelines, dlqTopic, lookups, knownRuns },
        memory,
      );
    const pipeline = pipelines.forRepartitionTopic(topic);
    if (!pipeline) return undefined;
    return new StatefulTask(
      topic,
      partition,
      { ...context, pipelines, dlqTopic },
      memory,
      pipeline.id,
    );
  };
}
