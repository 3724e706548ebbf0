import { CliError } from '../errors';
import { validateDocuments } from './validate';

const graph = {
  name: 'copy',
  sources: [{ id: 'in', topic: 'orders' }],
  sinks: [{ id: 'out', input: 'in', topic: 'orders_copy' }],
};

const files = (...documents: Array<{ origin: string; document: unknown }>) => ({
  documents: documents.map((d) => ({ ...d, file: d.origin })),
  problems: [],
});

describe('validateDocuments with graph definitions', () => {
  it('hands a valid graph to validate, and reports a broken one with its paths', () => {
    const seen: string[] = [];
    validateDocuments(
      files({ origin: 'g.yaml', document: graph }),
      {},
      () => undefined,
      (o, g) => seen.push(`${o}:${g.name}`),
    );
    expect(seen).toEqual(['g.yaml:copy']);
    const broken = { ...graph, sinks: [{ id: 'out', input: 'nowhere', topic: 'orders' }] };
    expect(() =>
      validateDocuments(
        files({ origin: 'g.yaml', document: broken }),
        {},
        () => undefined,
        () => {
          throw new Error('not valid');
        },
      ),
    ).toThrow(
      expect.objectContaining({
        details: [
          expect.stringMatching(/^g\.yaml: sinks\[0\]\.input: names no source or transform/),
          expect.stringMatching(/^g\.yaml: sinks\[0\]\.topic: .*feedback loop/),
        ],
      }),
    );
  });

  it('makes a valid graph a problem of its file where it would be stored (apply)', () => {
    let error: unknown;
    try {
      validateDocuments(files({ origin: 'g.yaml', document: graph }), {}, () => undefined);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toBe('1 problem in 1 of 1 file; nothing was changed');
  });
});
