import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  isGraphInput,
  isStartPoint,
  splitStoredFields,
  START_POINT,
  stateEpoch,
  validateAnyDefinition,
  validateDefinition,
  validateGraphDefinition,
} from '@sluice/contracts';
import type {
  DefinitionValidationOptions,
  PipelineStatsView,
  StoredPipeline,
  ValidationIssue,
} from '@sluice/contracts';
import { lookupTablesFrom, runReference } from '@sluice/operators';
import type { FastifyReply } from 'fastify';

import type { ApiToken } from '../auth/api-tokens';
import { BearerAuthGuard, Principal, RequiresRole } from '../auth/bearer-auth.guard';
import { ADMIN_CONFIG } from '../config/admin-config';
import type { AdminConfig } from '../config/admin-config';
import { DomainError } from '../errors/domain-error';
import { previewGraph, sourcedEvents } from './graph-definitions';
import { StatsService } from '../stats/stats.service';
import { bodyDocument, definitionFromDocument, prefixIssues } from './definition-body';
import { notFound, PipelinesService } from './pipelines.service';
import type { ChangeAuthor, VersionEntry } from './pipelines.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_PREVIEW_EVENTS = 100_000;
const DEFINITION_SCHEMA = { $ref: '#/components/schemas/PipelineDefinition' };
const DAILY_REVENUE_EXAMPLE = {
  name: 'daily-revenue',
  description: 'Revenue of paid orders per currency per day',
  source_event_types: ['order.placed'],
  operators: [
    { type: 'filter', field: 'status', op: 'eq', value: 'paid' },
    {
      type: 'window',
      config: { window_type: 'tumbling', size_seconds: 86400, allowed_lateness_seconds: 60 },
      aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
    },
  ],
  enabled: true,
  output: 'daily_revenue',
};
const DEFINITION_BODY = {
  schema: DEFINITION_SCHEMA,
  examples: {
    'daily revenue': { summary: 'AllSource daily revenue', value: DAILY_REVENUE_EXAMPLE },
  },
};

@ApiTags('pipelines')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@RequiresRole('viewer')
@Controller('api/v1/pipelines')
export class PipelinesController {
  /** What a definition is checked against besides itself: this installation's topic names. */
  private readonly rules: DefinitionValidationOptions;

  constructor(
    private readonly pipelines: PipelinesService,
    private readonly stats: StatsService,
    @Inject(ADMIN_CONFIG) config: AdminConfig,
  ) {
    this.rules = { topicPrefix: config.topicPrefix, sourceTopics: config.sourceTopics };
  }

  @Post()
  @RequiresRole('editor')
  @ApiOperation({
    summary: 'Create a pipeline (JSON or application/yaml); the same id and content again is a 200',
  })
  @ApiBody(DEFINITION_BODY)
  async create(
    @Body() body: unknown,
    @Principal() principal: ApiToken,
    @Headers('x-sluice-actor') note: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PipelineSummary> {
    const { definition, warnings, stored } = definitionFromDocument(bodyDocument(body), this.rules);
    const outcome = await this.pipelines.create(definition, authorOf(principal, note));
    void reply.status(outcome.created ? 201 : 200).header('etag', etag(outcome.pipeline.version));
    // A create has no stored fields to compare with: what a GET body carried is left aside.
    const ignored = Object.keys(stored).map((field) => ({
      path: field,
      message: 'is read-only (the admin sets it); ignored by a create',
    }));
    return summaryOf(outcome.pipeline, [...warnings, ...ignored]);
  }

  @Get()
  @ApiOperation({ summary: 'List pipelines' })
  async list(): Promise<{ pipelines: StoredPipeline[]; total: number }> {
    const pipelines = await this.pipelines.list();
    return { pipelines, total: pipelines.length };
  }

  @Get('stats')
  @ApiOperation({ summary: 'Stats of every pipeline, summed over live processors' })
  async allStats(): Promise<{ stats: PipelineStatsView[]; total: number }> {
    const stats = (await this.pipelines.list()).map((pipeline) => this.stats.statsFor(pipeline));
    return { stats, total: stats.length };
  }

  @Post('validate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Validate a definition without storing it' })
  @ApiBody(DEFINITION_BODY)
  validate(@Body() body: unknown): {
    valid: boolean;
    errors: ValidationIssue[];
    warnings: ValidationIssue[];
  } {
    // A body read with GET validates as its definition: the read-only fields are the admin's.
    const { definition } = splitStoredFields(bodyDocument(body));
    const result = validateAnyDefinition(definition, this.rules);
    return { valid: result.valid, errors: result.errors, warnings: result.warnings };
  }

  @Post('preview')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run a definition over the given events in process (windows flushed at the end); nothing is stored',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['pipeline', 'events'],
      properties: {
        pipeline: DEFINITION_SCHEMA,
        events: { type: 'array', items: { type: 'object' } },
        tables: {
          type: 'object',
          description: 'lookup tables for enrich: { <source>: { <key>: { ...record } } }',
          additionalProperties: { type: 'object', additionalProperties: { type: 'object' } },
        },
      },
    },
  })
  preview(@Body() body: unknown) {
    const document = bodyDocument(body);
    if (document === null || typeof document !== 'object' || Array.isArray(document)) {
      throw new DomainError(
        'validation_failed',
        'the body must be an object { pipeline, events }',
        [{ path: '$', message: 'must be object' }],
      );
    }
    const { pipeline, events, tables, ...rest } = document as Record<string, unknown>;
    const issues: ValidationIssue[] = Object.keys(rest).map((key) => ({
      path: key,
      message: 'is not a known field',
    }));
    if (!Array.isArray(events))
      issues.push({ path: 'events', message: 'must be an array of events' });
    else if (events.length > MAX_PREVIEW_EVENTS)
      issues.push({ path: 'events', message: `must hold at most ${MAX_PREVIEW_EVENTS} events` });
    issues.push(...lookupTableIssues(tables));
    // A pipeline read with GET previews as its definition: the read-only fields are the admin's.
    const { definition } = splitStoredFields(pipeline);
    // Only once the tables are known to be well formed.
    const lookups = () => ({ lookups: lookupTablesFrom((tables ?? {}) as PreviewTables) });
    if (isGraphInput(definition)) {
      const graph = validateGraphDefinition(definition, this.rules);
      if (!graph.valid) issues.push(...prefixIssues(graph.errors, 'pipeline'));
      const sourced =
        graph.valid && Array.isArray(events) ? sourcedEvents(graph.graph, events) : undefined;
      if (sourced) issues.push(...sourced.issues);
      if (issues.length > 0 || !graph.valid || !sourced) throw invalidPreview(issues);
      return previewGraph(graph.graph, sourced.events, lookups());
    }
    const validation = validateDefinition(definition, this.rules);
    if (!validation.valid) issues.push(...prefixIssues(validation.errors, 'pipeline'));
    if (issues.length > 0 || !validation.valid) throw invalidPreview(issues);
    const run = runReference(validation.definition, events as unknown[], lookups());
    return {
      results: run.results.map((record) => record.value),
      late: run.late.map((record) => record.value),
      dead_letters: run.dead_letters,
      stats: run.stats,
    };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a pipeline with its version and times' })
  async get(
    @Param('id') id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StoredPipeline> {
    const pipeline = await this.pipelines.get(checkedId(id));
    void reply.header('etag', etag(pipeline.version));
    return pipeline;
  }

  @Put(':id')
  @RequiresRole('editor')
  @ApiOperation({
    summary: 'Replace a definition (version + 1); If-Match: <version> guards against lost updates',
  })
  @ApiBody(DEFINITION_BODY)
  async replace(
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Principal() principal: ApiToken,
    @Headers('x-sluice-actor') note: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query('replay_from') replayFrom: string | undefined,
  ): Promise<PipelineSummary & { state: 'kept' | 'reset' }> {
    id = checkedId(id);
    const document = bodyDocument(body);
    if (
      document !== null &&
      typeof document === 'object' &&
      'id' in document &&
      (document as { id: unknown }).id !== id
    ) {
      throw new DomainError('validation_failed', 'the body names another pipeline than the path', [
        { path: 'id', message: `must be ${id} (the id in the path) or absent` },
      ]);
    }
    const { definition, warnings, stored } = definitionFromDocument(
      typeof document === 'object' && document !== null ? { ...document, id } : document,
      this.rules,
    );
    const { pipeline, state } = await this.pipelines.replace(id, definition, {
      expectedVersion: expectedVersion(ifMatch),
      replayFrom: replayFrom === undefined ? undefined : startPoint(replayFrom, 'replay_from'),
      stored,
      author: authorOf(principal, note),
    });
    void reply.header('etag', etag(pipeline.version));
    return { ...summaryOf(pipeline, warnings), state };
  }

  @Post(':id/replay')
  @HttpCode(200)
  @RequiresRole('editor')
  @ApiOperation({
    summary:
      'Reprocess the pipeline alone from a time or the earliest record, in a new state epoch, while the others go on',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['from'],
      properties: { from: { type: 'string', example: '2026-11-01T00:00:00Z' } },
    },
  })
  async replay(
    @Param('id') id: string,
    @Body() body: unknown,
    @Principal() principal: ApiToken,
    @Headers('x-sluice-actor') note: string | undefined,
  ): Promise<PipelineSummary & { replay: { from: string; generation: number } }> {
    id = checkedId(id);
    const document = body === undefined || body === null || body === '' ? {} : bodyDocument(body);
    if (document === null || typeof document !== 'object' || Array.isArray(document))
      throw new DomainError('validation_failed', 'the body must be an object { from }', [
        { path: '$', message: 'must be object' },
      ]);
    const { from, ...rest } = document as Record<string, unknown>;
    const unknown = Object.keys(rest).map((key) => ({
      path: key,
      message: 'is not a known field',
    }));
    if (unknown.length > 0)
      throw new DomainError(
        'validation_failed',
        `invalid replay: ${unknown[0]!.path} is not a known field`,
        unknown,
      );
    const pipeline = await this.pipelines.replay(
      id,
      startPoint(from, 'from'),
      authorOf(principal, note),
    );
    return {
      ...summaryOf(pipeline, []),
      replay: { from: pipeline.replay_from!, generation: pipeline.replay_generation! },
    };
  }

  @Delete(':id')
  @RequiresRole('editor')
  @ApiOperation({ summary: 'Delete a pipeline (a tombstone on the pipelines topic)' })
  async remove(
    @Param('id') id: string,
    @Principal() principal: ApiToken,
    @Headers('x-sluice-actor') note: string | undefined,
  ): Promise<{ pipeline_id: string; removed: true }> {
    await this.pipelines.remove(checkedId(id), authorOf(principal, note));
    return { pipeline_id: id, removed: true };
  }

  @Put(':id/reset')
  @RequiresRole('editor')
  @ApiOperation({ summary: "Clear the pipeline's operator state and counters on every processor" })
  async reset(@Param('id') id: string): Promise<{ pipeline_id: string; reset: true }> {
    await this.pipelines.reset(checkedId(id));
    return { pipeline_id: id, reset: true };
  }

  @Get(':id/stats')
  @ApiOperation({ summary: 'Stats of one pipeline' })
  async pipelineStats(@Param('id') id: string): Promise<PipelineStatsView> {
    return this.stats.statsFor(await this.pipelines.get(checkedId(id)));
  }

  @Get(':id/versions')
  @ApiOperation({ summary: "The definition's history" })
  async versions(
    @Param('id') id: string,
  ): Promise<{ pipeline_id: string; versions: VersionEntry[]; total: number }> {
    const versions = await this.pipelines.versions(checkedId(id));
    return { pipeline_id: id, versions, total: versions.length };
  }
}

interface PipelineSummary {
  pipeline_id: string;
  name: string;
  enabled: boolean;
  version: number;
  /** Its state epoch: every result it publishes carries it (docs/design.md §9). */
  epoch: string;
  /** Defaults applied and fields ignored, as validate reports them. */
  warnings: ValidationIssue[];
}

/** What create and replace answer (AllSource's create response, plus version and warnings). */
function summaryOf(pipeline: StoredPipeline, warnings: ValidationIssue[]): PipelineSummary {
  return {
    pipeline_id: pipeline.id,
    name: pipeline.name,
    enabled: pipeline.enabled,
    version: pipeline.version,
    epoch: stateEpoch(pipeline),
    warnings,
  };
}

/** Where a replay starts: `earliest` or an ISO-8601 time with its zone; a 400 at `path` else. */
function startPoint(value: unknown, path: string): string {
  if (typeof value === 'string' && isStartPoint(value)) return value;
  throw new DomainError('validation_failed', `invalid replay: ${path} must be ${START_POINT}`, [
    { path, message: `must be ${START_POINT}` },
  ]);
}

function checkedId(id: string): string {
  if (!UUID.test(id)) throw notFound(id);
  return id.toLowerCase();
}

/** The token's name is the actor; X-Sluice-Actor, which nothing checks, only a note. */
function authorOf(principal: ApiToken, header: string | undefined): ChangeAuthor {
  const note = header?.trim();
  return { actor: principal.name, note: note ? note.slice(0, 200) : null };
}

function etag(version: number): string {
  return `"${version}"`;
}

/** `If-Match: 3` or the ETag form `If-Match: "3"`; absent means unconditional. */
function expectedVersion(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(header);
  if (!match) {
    throw new DomainError(
      'invalid_body',
      'If-Match must be a version number, such as If-Match: 3',
      [{ path: 'If-Match', message: 'must be a version number' }],
    );
  }
  return Number(match[1]);
}

function invalidPreview(issues: ValidationIssue[]): DomainError {
  return new DomainError(
    'validation_failed',
    `invalid preview request: ${issues[0]!.path} ${issues[0]!.message}`,
    issues,
  );
}

type PreviewTables = Record<string, Record<string, Record<string, unknown>>>;

/** Preview's optional `tables`: what enrich looks up, as the processor's compacted topics hold. */
function lookupTableIssues(tables: unknown): ValidationIssue[] {
  if (tables === undefined) return [];
  if (!isPlainObject(tables)) return [{ path: 'tables', message: 'must be an object of tables' }];
  const issues: ValidationIssue[] = [];
  for (const [source, rows] of Object.entries(tables)) {
    if (!isPlainObject(rows)) {
      issues.push({ path: `tables.${source}`, message: 'must be an object of records by key' });
      continue;
    }
    for (const [key, row] of Object.entries(rows)) {
      if (!isPlainObject(row)) {
        issues.push({ path: `tables.${source}.${key}`, message: 'must be an object (a record)' });
      }
    }
  }
  return issues;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
