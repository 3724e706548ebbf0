import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';

import { BearerAuthGuard, RequiresRole } from '../auth/bearer-auth.guard';
import { DomainError } from '../errors/domain-error';
import { PipelinesService } from './pipelines.service';
import type { AuditEntry } from './pipelines.service';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

@ApiTags('audit')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@RequiresRole('admin')
@Controller('api/v1/audit')
export class AuditController {
  constructor(private readonly pipelines: PipelinesService) {}

  @Get()
  @ApiOperation({ summary: 'Every change of every pipeline, newest first, with who made it' })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: `1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}`,
  })
  async list(
    @Query('limit') limit: string | undefined,
  ): Promise<{ changes: AuditEntry[]; total: number }> {
    const changes = await this.pipelines.audit(limitOf(limit));
    return { changes, total: changes.length };
  }
}

function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new DomainError('validation_failed', 'limit is out of range', [
      { path: 'limit', message: `must be a whole number from 1 to ${MAX_LIMIT}` },
    ]);
  return limit;
}
