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
  it('takes a valid graph as it takes a linear definition', () => {
    const [valid] = validateDocuments(
      files({ origin: 'g.yaml', document: graph }),
      {},
      () => undefined,
    );
    expect(valid).toMatchObject({ origin: 'g.yaml', definition: { name: 'copy' } });
  });

  it('reports a broken graph with its paths, and changes nothing', () => {
    const broken = { ...graph, sinks: [{ id: 'out', input: 'nowhere', topic: 'orders' }] };
    let error: unknown;
    try {
      validateDocuments(files({ origin: 'g.yaml', document: broken }), {}, () => undefined);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({
      message: '2 problems in 1 of 1 file; nothing was changed',
      details: [
        expect.stringMatching(/^g\.yaml: sinks\[0\]\.input: names no source or transform/),
        expect.stringMatching(/^g\.yaml: sinks\[0\]\.topic: .*feedback loop/),
      ],
    });
  });
});
