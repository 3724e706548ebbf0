import { Injectable } from '@nestjs/common';
import { canonicalJson, processorGroupOf, sameDefinition, stateMeaning } from '@sluice/contracts';
import type { AnyPipelineDefinition, StoredField, StoredPipeline } from '@sluice/contracts';
import type { EntityManager } from 'typeorm';

import { DatabaseService } from '../database/database.service';
import { PipelineRow, PipelineVersionRow } from '../database/entities';
import type { VersionChange } from '../database/entities';
import { DomainError } from '../errors/domain-error';
import { OutboxRelayService } from '../outbox/outbox-relay.service';
import { storedPipelineOf } from './stored-pipeline';

export interface CreateOutcome {
  created: boolean;
  pipeline: StoredPipeline;
}

export interface ReplaceOutcome {
  pipeline: StoredPipeline;
  /**
   * Whether the processors keep the pipeline's state: `reset` when the update changes what the
   * state means (its transforms or what it reads) or replays it, else `kept`.
   */
  state: 'kept' | 'reset';
}

export interface ReplaceOptions {
  /** If-Match: the version the caller read. */
  expectedVersion: number | undefined;
  /** `?replay_from=`: the update also replays the pipeline from there (see `replay`). */
  replayFrom?: string | undefined;
  /** The read-only fields the body carried: each must be what the store holds. */
  stored: Partial<Record<StoredField, unknown>>;
  author: ChangeAuthor;
}

/** Who made a change: the token's name, and the client's own free-text note. */
export interface ChangeAuthor {
  actor: string;
  note: string | null;
}

export interface VersionEntry {
  version: number;
  change: VersionChange;
  changed_by: string;
  note: string | null;
  changed_at: string;
  definition: AnyPipelineDefinition;
}

/** One change of any pipeline, as the audit log lists it. */
export interface AuditEntry {
  pipeline_id: string;
  name: string;
  version: number;
  change: VersionChange;
  changed_by: string;
  note: string | null;
  changed_at: string;
}

const UNIQUE_VIOLATION = '23505';

/**
 * Pipeline definitions in PostgreSQL. Every change writes the current row, a version row and an
 * outbox row in one transaction, under a row lock, so versions are gapless and the broadcast to
 * Kafka can never be lost or reordered.
 */
@Injectable()
export class PipelinesService {
  constructor(
    private readonly database: DatabaseService,
    private readonly relay: OutboxRelayService,
  ) {}

  async create(definition: AnyPipelineDefinition, author: ChangeAuthor): Promise<CreateOutcome> {
    try {
      return await this.createOnce(definition, author);
    } catch (error) {
      // Two creates of one new id raced and the other committed first: decide again.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION)
        return this.createOnce(definition, author);
      throw error;
    }
  }

  private async createOnce(
    definition: AnyPipelineDefinition,
    author: ChangeAuthor,
  ): Promise<CreateOutcome> {
    const outcome = await this.database.transaction(async (manager) => {
      const existing = await this.lockRow(manager, definition.id);
      if (existing && existing.deleted_at === null) {
        if (sameDefinition(existing.definition, definition)) {
          return { created: false, pipeline: storedPipelineOf(existing) };
        }
        throw new DomainError(
          'conflict',
          `pipeline ${definition.id} exists with a different definition; replace it with PUT /api/v1/pipelines/${definition.id}`,
        );
      }
      const now = new Date();
      const row = manager.getRepository(PipelineRow).create({
        id: definition.id,
        name: definition.name,
        definition,
        version: (existing?.version ?? 0) + 1,
        reset_generation: existing?.reset_generation ?? 0,
        // A new pipeline, not a replay of the deleted one: it starts where its sources say.
        replay_generation: 0,
        replay_from: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      });
      await manager.getRepository(PipelineRow).save(row);
      await writeDefinition(manager, row);
      await this.record(manager, row, 'created', author, now);
      return { created: true, pipeline: storedPipelineOf(row) };
    });
    if (outcome.created) this.relay.wake();
    return outcome;
  }

  async replace(
    id: string,
    definition: AnyPipelineDefinition,
    { expectedVersion, replayFrom, stored, author }: ReplaceOptions,
  ): Promise<ReplaceOutcome> {
    const outcome = await this.database.transaction(async (manager) => {
      const row = await this.liveRow(manager, id);
      if (expectedVersion !== undefined && row.version !== expectedVersion) {
        throw new DomainError(
          'precondition_failed',
          `pipeline ${id} is at version ${row.version}, not ${expectedVersion}; read it again and retry`,
        );
      }
      checkStoredFields(id, storedPipelineOf(row), stored);
      checkSameGroup(row.definition, definition);
      const kept =
        replayFrom === undefined &&
        canonicalJson(stateMeaning(row.definition)) === canonicalJson(stateMeaning(definition));
      const now = new Date();
      row.definition = definition;
      row.name = definition.name;
      row.version += 1;
      row.updated_at = now;
      if (replayFrom !== undefined) {
        row.replay_generation += 1;
        row.replay_from = replayFrom;
      }
      await manager.getRepository(PipelineRow).save(row);
      await writeDefinition(manager, row);
      await this.record(manager, row, 'updated', author, now);
      const state: ReplaceOutcome['state'] = kept ? 'kept' : 'reset';
      return { pipeline: storedPipelineOf(row), state };
    });
    this.relay.wake();
    return outcome;
  }

  async remove(id: string, author: ChangeAuthor): Promise<void> {
    await this.database.transaction(async (manager) => {
      const row = await this.liveRow(manager, id);
      const now = new Date();
      row.version += 1;
      row.updated_at = now;
      row.deleted_at = now;
      await manager.getRepository(PipelineRow).save(row);
      await this.record(manager, row, 'deleted', author, now);
    });
    this.relay.wake();
  }

  /**
   * A replay (docs/design.md §9): a new run and state epoch that reads the pipeline's sources
   * again from `from` (`earliest` or an ISO-8601 time), while the other pipelines go on. A
   * version of its own in the history.
   */
  async replay(id: string, from: string, author: ChangeAuthor): Promise<StoredPipeline> {
    const pipeline = await this.database.transaction(async (manager) => {
      const row = await this.liveRow(manager, id);
      const now = new Date();
      row.version += 1;
      row.updated_at = now;
      row.replay_generation += 1;
      row.replay_from = from;
      await manager.getRepository(PipelineRow).save(row);
      await this.record(manager, row, 'replayed', author, now);
      return storedPipelineOf(row);
    });
    this.relay.wake();
    return pipeline;
  }

  /** Bumps the reset generation: every processor clears the pipeline's state and counters. */
  async reset(id: string): Promise<StoredPipeline> {
    const pipeline = await this.database.transaction(async (manager) => {
      const row = await this.liveRow(manager, id);
      row.reset_generation += 1;
      row.updated_at = new Date();
      await manager.getRepository(PipelineRow).save(row);
      await this.enqueue(manager, row);
      return storedPipelineOf(row);
    });
    this.relay.wake();
    return pipeline;
  }

  async get(id: string): Promise<StoredPipeline> {
    return this.database.query(async (manager) => {
      const row = await manager.getRepository(PipelineRow).findOne({ where: { id } });
      if (row === null || row.deleted_at !== null) throw notFound(id);
      return storedPipelineOf(row);
    });
  }

  async list(): Promise<StoredPipeline[]> {
    return this.database.query(async (manager) => {
      const rows = await manager
        .getRepository(PipelineRow)
        .createQueryBuilder('p')
        .where('p.deleted_at IS NULL')
        .orderBy('p.created_at', 'ASC')
        .addOrderBy('p.id', 'ASC')
        .getMany();
      return rows.map(storedPipelineOf);
    });
  }

  async versions(id: string): Promise<VersionEntry[]> {
    return this.database.query(async (manager) => {
      const rows = await manager
        .getRepository(PipelineVersionRow)
        .find({ where: { pipeline_id: id }, order: { version: 'ASC' } });
      if (rows.length === 0) throw notFound(id);
      return rows.map((row) => ({
        version: row.version,
        change: row.change,
        changed_by: row.changed_by,
        note: row.note,
        changed_at: row.changed_at.toISOString(),
        definition: row.definition,
      }));
    });
  }

  /** The latest `limit` changes of every pipeline, newest first. */
  async audit(limit: number): Promise<AuditEntry[]> {
    return this.database.query(async (manager) => {
      const rows = await manager
        .getRepository(PipelineVersionRow)
        .find({ order: { changed_at: 'DESC', version: 'DESC' }, take: limit });
      return rows.map((row) => ({
        pipeline_id: row.pipeline_id,
        name: row.definition.name,
        version: row.version,
        change: row.change,
        changed_by: row.changed_by,
        note: row.note,
        changed_at: row.changed_at.toISOString(),
      }));
    });
  }

  private lockRow(manager: EntityManager, id: string): Promise<PipelineRow | null> {
    return manager
      .getRepository(PipelineRow)
      .createQueryBuilder('p')
      .setLock('pessimistic_write')
      .where('p.id = :id', { id })
      .getOne();
  }

  private async liveRow(manager: EntityManager, id: string): Promise<PipelineRow> {
    const row = await this.lockRow(manager, id);
    if (row === null || row.deleted_at !== null) throw notFound(id);
    return row;
  }

  private async record(
    manager: EntityManager,
    row: PipelineRow,
    change: VersionChange,
    author: ChangeAuthor,
    at: Date,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO pipeline_versions (pipeline_id, version, definition, change, changed_by, note, changed_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [row.id, row.version, JSON.stringify(row.definition), change, author.actor, author.note, at],
    );
    await this.enqueue(manager, row);
  }

  private async enqueue(manager: EntityManager, row: PipelineRow): Promise<void> {
    await enqueueOutbox(manager, row.id, row.deleted_at === null ? storedPipelineOf(row) : null);
  }
}

/**
 * Writes the row's definition as it is, key order included: TypeORM compares json columns
 * whatever their key order, and would skip a change that only reorders keys.
 */
async function writeDefinition(manager: EntityManager, row: PipelineRow): Promise<void> {
  await manager.query(`UPDATE pipelines SET definition = $2 WHERE id = $1`, [
    row.id,
    JSON.stringify(row.definition),
  ]);
}

/** Queues a record for `sluice.pipelines` (null: a tombstone) in the caller's transaction. */
export async function enqueueOutbox(
  manager: EntityManager,
  pipelineId: string,
  payload: StoredPipeline | null,
): Promise<void> {
  await manager.query(
    `INSERT INTO outbox (pipeline_id, payload, created_at) VALUES ($1, $2, now())`,
    [pipelineId, payload === null ? null : JSON.stringify(payload)],
  );
}

/**
 * A body read with GET and sent back carries the read-only fields: accepted when they are what
 * the store holds. A stale `version` is a lost update (412, as a stale If-Match); any other
 * field that differs is a 400 naming it.
 */
function checkStoredFields(
  id: string,
  current: StoredPipeline,
  stored: Partial<Record<StoredField, unknown>>,
): void {
  if ('version' in stored && stored.version !== current.version) {
    throw new DomainError(
      'precondition_failed',
      `pipeline ${id} is at version ${current.version}, not ${JSON.stringify(stored.version)}; read it again and retry`,
      [{ path: 'version', message: `must be ${current.version} (the stored version) or absent` }],
    );
  }
  const differing = (
    ['reset_generation', 'created_at', 'updated_at', 'replay_generation', 'replay_from'] as const
  ).filter((field) => field in stored && stored[field] !== current[field]);
  if (differing.length > 0) {
    throw new DomainError(
      'validation_failed',
      `read-only field${differing.length > 1 ? 's' : ''} ${differing.join(', ')} differ${differing.length > 1 ? '' : 's'} from the stored pipeline`,
      differing.map((field) => ({
        path: field,
        message: `is read-only: must be ${JSON.stringify(current[field])} (the stored value) or absent`,
      })),
    );
  }
}

export function notFound(id: string): DomainError {
  return new DomainError('not_found', `no pipeline ${id}`);
}

/**
 * A pipeline stays on its processor group: another group's replicas have their own
 * transactional ids, so nothing would fence the first group's last transactions while the
 * second one took over the pipeline's topics and state.
 */
function checkSameGroup(before: AnyPipelineDefinition, after: AnyPipelineDefinition): void {
  const was = processorGroupOf(before);
  if (processorGroupOf(after) === was) return;
  throw new DomainError('validation_failed', 'a pipeline cannot move to another processor group', [
    {
      path: 'processor_group',
      message: `must stay ${was}: delete the pipeline and create it again under the other group (its state starts afresh)`,
    },
  ]);
}
