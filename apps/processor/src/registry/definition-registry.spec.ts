import type { PipelineDefinition, StoredFields } from '@sluice/contracts';
import { dailyRevenueDefinition } from '@sluice/operators/testing';

import { DefinitionRegistry } from './definition-registry';

const ID = '00000000-0000-4000-8000-000000000001';

function record(overrides: Partial<PipelineDefinition & StoredFields> = {}): string {
  return JSON.stringify({
    ...dailyRevenueDefinition(),
    version: 1,
    reset_generation: 0,
    created_at: '2026-11-29T10:00:00.000Z',
    updated_at: '2026-11-29T10:00:00.000Z',
    ...overrides,
  });
}

describe('DefinitionRegistry', () => {
  it("runs its own processor group's pipelines only, the default group's when none is named", () => {
    const bars = new DefinitionRegistry({ processorGroup: 'bars' });
    expect(bars.apply(ID, record())).toEqual({
      kind: 'elsewhere',
      id: ID,
      group: 'sluice-processor',
    });
    expect(bars.apply(ID, record({ version: 2, processor_group: 'bars' })).kind).toBe('created');
    // A re-sent older record of another group changes nothing; a newer one moves it away.
    expect(bars.apply(ID, record({ version: 1, processor_group: 'demo' })).kind).toBe('ignored');
    expect(bars.size).toBe(1);
    expect(bars.apply(ID, record({ version: 3, processor_group: 'demo' })).kind).toBe('deleted');
    expect(bars.size).toBe(0);

    const standard = new DefinitionRegistry();
    expect(standard.apply(ID, record()).kind).toBe('created');
    // Another group's invalid record is not this replica's to park.
    expect(
      standard.apply(ID, record({ version: 2, processor_group: 'bars', operators: 'x' as never }))
        .kind,
    ).toBe('deleted');
  });

  it('creates, updates, resets and deletes pipelines in log order', () => {
    const registry = new DefinitionRegistry();
    const created = registry.apply(ID, record());
    expect(created.kind).toBe('created');
    expect(registry.get(ID)?.plan.transforms.at(-1)?.operator.type).toBe('window');

    expect(registry.apply(ID, record({ version: 2, name: 'renamed' }))).toMatchObject({
      kind: 'updated',
      freshState: false,
    });
    const changedOperators = registry.apply(
      ID,
      record({ version: 3, operators: [{ type: 'reduce', function: 'count' }] }),
    );
    expect(changedOperators).toMatchObject({ kind: 'updated', freshState: true });
    expect(registry.get(ID)?.plan.transforms.at(-1)?.operator.type).toBe('reduce');

    expect(
      registry.apply(
        ID,
        record({
          version: 3,
          reset_generation: 1,
          operators: [{ type: 'reduce', function: 'count' }],
        }),
      ).kind,
    ).toBe('reset');
    expect(registry.apply(ID, null)).toEqual({ kind: 'deleted', id: ID });
    expect(registry.size).toBe(0);
  });

  it('ignores re-sent and older records, so an at-least-once relay cannot roll a pipeline back', () => {
    const registry = new DefinitionRegistry();
    registry.apply(ID, record({ version: 2 }));
    expect(registry.apply(ID, record({ version: 2 }))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('not newer'),
    });
    expect(registry.apply(ID, record({ version: 1 })).kind).toBe('ignored');
    expect(registry.get(ID)?.stored.version).toBe(2);
  });

  it("calls a newer definition that breaks this replica's rules invalid, and keeps the one it runs", () => {
    const registry = new DefinitionRegistry({ rules: { sourceTopics: ['orders'] } });
    registry.apply(ID, record({ version: 1 }));
    expect(registry.apply(ID, record({ version: 2, output: 'orders' }))).toEqual({
      kind: 'invalid',
      id: ID,
      version: 2,
      reset_generation: 0,
      reason: expect.stringContaining('output is a source topic of the processors'),
    });
    expect(registry.get(ID)?.stored.version).toBe(1);
    expect(registry.apply(ID, record({ version: 1, output: 'orders' })).kind).toBe('ignored');
    expect(registry.apply(ID, record({ version: 3 })).kind).toBe('updated');
  });

  it('keeps state when a definition only reorders its keys', () => {
    const registry = new DefinitionRegistry();
    registry.apply(ID, record({ version: 1 }));
    const reordered = dailyRevenueDefinition().operators.map((operator) =>
      Object.fromEntries(Object.entries(operator).reverse()),
    );
    expect(
      registry.apply(
        ID,
        record({ version: 2, operators: reordered as PipelineDefinition['operators'] }),
      ),
    ).toMatchObject({ kind: 'updated', freshState: false });
  });

  it('skips malformed and invalid records with a reason instead of failing', () => {
    const registry = new DefinitionRegistry();
    expect(registry.apply(ID, '{not json')).toEqual({
      kind: 'ignored',
      id: ID,
      reason: 'the record is not JSON',
    });
    expect(registry.apply(ID, '[1]')).toMatchObject({
      kind: 'ignored',
      reason: 'the record is not a JSON object',
    });
    expect(registry.apply(ID, record({ output: '' }))).toMatchObject({
      kind: 'invalid',
      version: 1,
      reason: expect.stringContaining('output must not be empty'),
    });
    expect(registry.apply('00000000-0000-4000-8000-000000000002', record())).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('is not its key'),
    });
    expect(registry.apply(ID, record({ version: 'one' as never }))).toMatchObject({
      kind: 'ignored',
      reason: 'version and reset_generation must be integers',
    });
    // Its last record was invalid here: the tombstone ends the parked pipeline all the same.
    expect(registry.apply(ID, null)).toEqual({ kind: 'deleted', id: ID });
    expect(registry.apply(ID, null)).toMatchObject({
      kind: 'ignored',
      reason: 'tombstone for an unknown pipeline',
    });
    expect(registry.size).toBe(0);
  });
});
