// The processor's view of `sluice.pipelines` (docs/design.md §5): every record is applied in log order,
// validated and compiled once. Records are never trusted blindly: a malformed or invalid one is
// reported and skipped, and a record older than what is known (a re-sent outbox row) is ignored.
import {
  canonicalJson,
  DEFAULT_PROCESSOR_GROUP,
  isGraph,
  pipelineRun,
  processorGroupOf,
  splitStoredFields,
  stateMeaning,
  validateAnyDefinition,
} from '@sluice/contracts';
import type { DefinitionValidationOptions, StoredPipeline } from '@sluice/contracts';
import { planOfGraph, planOfLinear } from '@sluice/operators';
import type { PipelinePlan } from '@sluice/operators';

export interface RegisteredPipeline {
  stored: StoredPipeline;
  /** The graph it runs: a linear definition reads this replica's SOURCE_TOPICS. */
  plan: PipelinePlan;
}

export type RegistryChange =
  | { kind: 'created'; id: string; pipeline: RegisteredPipeline }
  /** `freshState`: the operators or event types changed, so state starts afresh from here. */
  | { kind: 'updated'; id: string; pipeline: RegisteredPipeline; freshState: boolean }
  /** A reset: clear the pipeline's state and counters everywhere. */
  | { kind: 'reset'; id: string; pipeline: RegisteredPipeline }
  /** A replay: a new run and state epoch, reading its sources again from `replay_from`. */
  | { kind: 'replayed'; id: string; pipeline: RegisteredPipeline }
  | { kind: 'deleted'; id: string }
  /**
   * A newer definition this replica cannot run (it breaks this replica's rules, such as writing
   * to one of its source topics): the pipeline is parked with the reason, and its earlier
   * definition, if any, goes on running.
   */
  | { kind: 'invalid'; id: string; version: number; reset_generation: number; reason: string }
  | { kind: 'ignored'; id: string; reason: string }
  /** Another processor group's pipeline: this replica neither runs nor reports it. */
  | { kind: 'elsewhere'; id: string; group: string };

export interface RegistryOptions {
  /**
   * This replica's topic prefix and source topics, which definitions are checked against; the
   * source topics are also what a linear definition reads.
   */
  rules?: DefinitionValidationOptions;
  /** This replica's CONSUMER_GROUP: it runs the pipelines of that processor group only. */
  processorGroup?: string;
}

export class DefinitionRegistry {
  private readonly pipelines = new Map<string, RegisteredPipeline>();
  /** Ids whose latest record was invalid here: their tombstone is a delete all the same. */
  private readonly invalid = new Set<string>();

  constructor(private readonly options: RegistryOptions = {}) {}

  get size(): number {
    return this.pipelines.size;
  }

  get(id: string): RegisteredPipeline | undefined {
    return this.pipelines.get(id);
  }

  all(): RegisteredPipeline[] {
    return [...this.pipelines.values()];
  }

  /**
   * The runs of every pipeline known, running here or not, or of those among them that read
   * `topic`: a source position is forgotten only when its pipeline is deleted or replayed.
   */
  runs(topic?: string): Set<string> {
    const reading = (pipeline: RegisteredPipeline) =>
      topic === undefined || pipeline.plan.sources.some((source) => source.topics.includes(topic));
    return new Set(
      this.all()
        .filter(reading)
        .map((pipeline) => pipelineRun(pipeline.stored)),
    );
  }

  /** Applies one record of the pipelines topic (`value: null` is a tombstone). */
  apply(id: string, value: string | null): RegistryChange {
    const known = this.pipelines.get(id);
    if (value === null) {
      if (this.invalid.delete(id) && !known) return { kind: 'deleted', id };
      if (!known) return { kind: 'ignored', id, reason: 'tombstone for an unknown pipeline' };
      this.pipelines.delete(id);
      return { kind: 'deleted', id };
    }
    const group = groupOfRecord(value);
    if (group !== undefined && group !== (this.options.processorGroup ?? DEFAULT_PROCESSOR_GROUP)) {
      if (!known) return { kind: 'elsewhere', id, group };
      // A re-sent older record (the outbox relay is at-least-once) must not stop the pipeline.
      const generation = generationOfRecord(value);
      if (generation === undefined || !isNewer(generation, known.stored))
        return { kind: 'ignored', id, reason: `an older record, of processor group ${group}` };
      // Moved away by a newer record (the admin refuses that; a hand-written one may not).
      this.pipelines.delete(id);
      this.invalid.delete(id);
      return { kind: 'deleted', id };
    }
    const parsed = parseStored(id, value, this.options.rules ?? {});
    if ('reason' in parsed) {
      if (!parsed.generation) return { kind: 'ignored', id, reason: parsed.reason };
      if (known && !isNewer(parsed.generation, known.stored))
        return { kind: 'ignored', id, reason: `an older invalid record: ${parsed.reason}` };
      this.invalid.add(id);
      return { kind: 'invalid', id, ...parsed.generation, reason: parsed.reason };
    }
    const stored = parsed.stored;
    if (known && !isNewer(stored, known.stored)) {
      const seen = `${known.stored.version}/${known.stored.reset_generation}`;
      return {
        kind: 'ignored',
        id,
        reason: `version/generation ${stored.version}/${stored.reset_generation} is not newer than ${seen}`,
      };
    }
    const sourceTopics = this.options.rules?.sourceTopics ?? ['events'];
    const plan = isGraph(stored) ? planOfGraph(stored) : planOfLinear(stored, sourceTopics);
    const pipeline = { stored, plan };
    this.pipelines.set(id, pipeline);
    this.invalid.delete(id);
    if (!known) return { kind: 'created', id, pipeline };
    if (stored.reset_generation > known.stored.reset_generation)
      return { kind: 'reset', id, pipeline };
    if ((stored.replay_generation ?? 0) > (known.stored.replay_generation ?? 0))
      return { kind: 'replayed', id, pipeline };
    return {
      kind: 'updated',
      id,
      pipeline,
      freshState: semantics(stored) !== semantics(known.stored),
    };
  }
}

type Generation = Pick<StoredPipeline, 'version' | 'reset_generation'>;

function parseStored(
  id: string,
  value: string,
  rules: DefinitionValidationOptions,
): { stored: StoredPipeline } | { reason: string; generation?: Generation } {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { reason: 'the record is not JSON' };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { reason: 'the record is not a JSON object' };
  const record = json as Record<string, unknown>;
  const version = record['version'];
  const generation = record['reset_generation'];
  if (!Number.isSafeInteger(version) || !Number.isSafeInteger(generation)) {
    return { reason: 'version and reset_generation must be integers' };
  }
  const known = { version: version as number, reset_generation: generation as number };
  const { definition } = splitStoredFields(record);
  const validation = validateAnyDefinition(definition, rules);
  if (!validation.valid) {
    return {
      reason: `invalid definition: ${validation.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      generation: known,
    };
  }
  if (validation.definition.id !== id)
    return { reason: `the record's id ${validation.definition.id} is not its key ${id}` };
  const replay = record['replay_generation'];
  const replayFrom = record['replay_from'];
  return {
    stored: {
      ...validation.definition,
      ...known,
      created_at: String(record['created_at'] ?? ''),
      updated_at: String(record['updated_at'] ?? ''),
      ...(Number.isSafeInteger(replay) && typeof replayFrom === 'string'
        ? { replay_generation: replay as number, replay_from: replayFrom }
        : {}),
    },
  };
}

/** Outbox rows may be published twice (at-least-once relay): only a newer record changes anything. */
function isNewer(candidate: Generation, current: Generation): boolean {
  if (candidate.reset_generation !== current.reset_generation)
    return candidate.reset_generation > current.reset_generation;
  return candidate.version > current.version;
}

function semantics(stored: StoredPipeline): string {
  return canonicalJson(stateMeaning(stored));
}

/** The processor group a record names (the default when it names none), if it is readable. */
function groupOfRecord(value: string): string | undefined {
  try {
    const record: unknown = JSON.parse(value);
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
    const group = (record as { processor_group?: unknown }).processor_group;
    if (group !== undefined && typeof group !== 'string') return undefined;
    return processorGroupOf({ processor_group: group });
  } catch {
    return undefined;
  }
}

/** A record's version and reset generation, if it is readable. */
function generationOfRecord(value: string): Generation | undefined {
  try {
    const record = JSON.parse(value) as Record<string, unknown>;
    const version = record['version'];
    const generation = record['reset_generation'];
    if (!Number.isSafeInteger(version) || !Number.isSafeInteger(generation)) return undefined;
    return { version: version as number, reset_generation: generation as number };
  } catch {
    return undefined;
  }
}
