import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import type { AnyPipelineDefinition, StoredPipeline } from '@sluice/contracts';

/** The current definition of each pipeline; a deleted one keeps its row with `deleted_at`. */
@Entity({ name: 'pipelines' })
export class PipelineRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  /** `json`, not `jsonb`: the definition keeps the key order it was written in. */
  @Column('json')
  definition!: AnyPipelineDefinition;

  @Column('integer')
  version!: number;

  @Column('integer')
  reset_generation!: number;

  /** Bumped by each replay; 0 before the first. */
  @Column('integer', { default: 0 })
  replay_generation!: number;

  /** Where the latest replay starts: `earliest` or an ISO-8601 time. */
  @Column('text', { nullable: true })
  replay_from!: string | null;

  @Column('timestamptz')
  created_at!: Date;

  @Column('timestamptz')
  updated_at!: Date;

  @Column('timestamptz', { nullable: true })
  deleted_at!: Date | null;
}

export type VersionChange = 'created' | 'updated' | 'deleted' | 'replayed';

/** Every version of every definition: gapless per pipeline, with who changed it and when. */
@Entity({ name: 'pipeline_versions' })
export class PipelineVersionRow {
  @PrimaryColumn('uuid')
  pipeline_id!: string;

  @PrimaryColumn('integer')
  version!: number;

  @Column('json')
  definition!: AnyPipelineDefinition;

  @Column('text')
  change!: VersionChange;

  /** The name of the token that made the change. */
  @Column('text')
  changed_by!: string;

  /** What the client said of itself (X-Sluice-Actor): a note, not checked. */
  @Column('text', { nullable: true })
  note!: string | null;

  @Column('timestamptz')
  changed_at!: Date;
}

/**
 * Records to publish on `sluice.pipelines`, written in the same transaction as the change they
 * announce (a transactional outbox); `payload: null` is a tombstone.
 */
@Entity({ name: 'outbox' })
export class OutboxRow {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  @Column('uuid')
  pipeline_id!: string;

  @Column('json', { nullable: true })
  payload!: StoredPipeline | null;

  @Column('timestamptz')
  created_at!: Date;

  @Column('timestamptz', { nullable: true })
  sent_at!: Date | null;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('text', { nullable: true })
  last_error!: string | null;

  /** Kafka refused the record for a reason that will not change: it is not sent again. */
  @Column('timestamptz', { nullable: true })
  refused_at!: Date | null;
}

export const ENTITIES = [PipelineRow, PipelineVersionRow, OutboxRow];
