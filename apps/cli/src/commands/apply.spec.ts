import type { StoredPipeline } from '@sluice/contracts';
import { dailyRevenueDefinition } from '@sluice/operators/testing';

import { CliError } from '../errors';
import { planApply } from './apply';
import { validateDocuments } from './validate';

/** Documents as `readDefinitionDocuments` hands them over, each its own file unless `#n`. */
const validate = (...documents: Array<{ origin: string; document: unknown }>) =>
  validateDocuments(
    {
      documents: documents.map((d) => ({ ...d, file: d.origin.replace(/#\d+$/, '') })),
      problems: [],
    },
    {},
    () => undefined,
  );

const stored = (overrides: Partial<StoredPipeline> = {}): StoredPipeline => ({
  ...validate({ origin: 'x', document: dailyRevenueDefinition() })[0]!.definition,
  version: 3,
  reset_generation: 0,
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  ...overrides,
});

describe('planApply', () => {
  it('matches by id when given, else by name; same content is unchanged whatever the key order', () => {
    const { id: _id, ...withoutId } = dailyRevenueDefinition();
    // The same definition with its keys in reverse order, as a YAML file might have them.
    const reordered = Object.fromEntries(Object.entries(dailyRevenueDefinition()).reverse());
    const documents = validate(
      { origin: 'a.yaml', document: withoutId },
      {
        origin: 'b.yaml',
        document: {
          ...dailyRevenueDefinition({ id: '00000000-0000-4000-8000-00000000000b', name: 'other' }),
        },
      },
    );
    const plan = planApply(documents, [stored()]);
    expect(plan.map((a) => a.kind)).toEqual(['unchanged', 'create']);
    expect(planApply(validate({ origin: 'c', document: reordered }), [stored()])[0]!.kind).toBe(
      'unchanged',
    );
  });

  it('plans an update when any content field differs', () => {
    const documents = validate({
      origin: 'a',
      document: dailyRevenueDefinition({ output: 'elsewhere' }),
    });
    const [action] = planApply(documents, [stored()]);
    expect(action).toMatchObject({ kind: 'update', current: { version: 3 } });
  });

  it('refuses a name shared by two pipelines, and a document given twice', () => {
    const { id: _id, ...withoutId } = dailyRevenueDefinition();
    const twins = [stored(), stored({ id: '00000000-0000-4000-8000-0000000000ff' })];
    expect(() => planApply(validate({ origin: 'a', document: withoutId }), twins)).toThrow(
      /2 pipelines are named "daily-revenue"; give the id/,
    );
    const twice = validate(
      { origin: 'a', document: withoutId },
      { origin: 'b', document: withoutId },
    );
    expect(() => planApply(twice, [])).toThrow(CliError);
  });
});

describe('validateDocuments', () => {
  it('reports every problem of every document with its origin and JSON path', () => {
    const attempt = () =>
      validate(
        { origin: 'one.yaml', document: { ...dailyRevenueDefinition(), colour: 'red' } },
        {
          origin: 'two.yaml#2',
          document: dailyRevenueDefinition({ operators: [{ type: 'teleport' }] as never }),
        },
        { origin: 'three.yaml', document: dailyRevenueDefinition() },
      );
    expect(attempt).toThrow('2 problems in 2 of 3 files; nothing was changed');
    try {
      attempt();
    } catch (error) {
      expect((error as CliError).details).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^one\.yaml: colour: /),
          expect.stringMatching(/^two\.yaml#2: operators/),
        ]),
      );
    }
  });
});

describe('what `sluice get -o yaml` printed, applied again', () => {
  it('validates as its definition and plans nothing (unchanged)', () => {
    const current = stored();
    const [document] = validate({ origin: 'got.yaml', document: { ...current } });
    expect(document!.stored).toEqual({
      version: 3,
      reset_generation: 0,
      created_at: '2026-11-01T00:00:00.000Z',
      updated_at: '2026-11-01T00:00:00.000Z',
    });
    expect(planApply([document!], [current])[0]!.kind).toBe('unchanged');
  });
});

describe('files that do not parse', () => {
  it('are a problem of their own, reported with those of the files that do', () => {
    const attempt = () =>
      validateDocuments(
        {
          documents: [{ file: 'ok.yaml', origin: 'ok.yaml', document: { name: 'x' } }],
          problems: [{ file: 'broken.yaml', line: 'broken.yaml: $: is not valid YAML: …' }],
        },
        {},
        () => undefined,
      );
    expect(attempt).toThrow('3 problems in 2 of 2 files; nothing was changed');
    try {
      attempt();
    } catch (error) {
      expect((error as CliError).details).toEqual([
        'broken.yaml: $: is not valid YAML: …',
        'ok.yaml: operators: is required',
        'ok.yaml: output: is required',
      ]);
    }
  });
});
