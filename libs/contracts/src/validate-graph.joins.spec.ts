import { stateMeaning } from './any-definition';
import { validateGraphDefinition } from './validate-graph';

type Json = Record<string, unknown>;

/** Orders ⋈ payments within an hour, and orders ⋈ the customers table. */
const joins = () => ({
  name: 'orders-joined',
  sources: [
    { id: 'orders', topic: 'orders', event_types: ['order.placed'] } as Json,
    { id: 'payments', topic: 'payments' } as Json,
    { id: 'customers', topic: 'customers', as: 'table', key: 'customer_id' } as Json,
  ],
  transforms: [
    {
      id: 'paid',
      type: 'join',
      inputs: ['orders', 'payments'],
      on: 'order_id',
      within_seconds: 3600,
      kind: 'left',
      select: { total: 'left.total', paid: 'right.amount' },
    } as Json,
    {
      id: 'enriched',
      type: 'join',
      inputs: ['orders', 'customers'],
      on: 'customer_id',
      on_missing: 'emit',
    } as Json,
  ],
  sinks: [
    { id: 'paid_out', input: 'paid', topic: 'orders_paid' } as Json,
    { id: 'enriched_out', input: 'enriched', topic: 'orders_enriched' } as Json,
  ],
});

const errorsOf = (input: unknown) => validateGraphDefinition(input).errors;

describe('validateGraphDefinition: joins and tables', () => {
  it('accepts an interval join and a table join; a table starts at the earliest row', () => {
    const result = validateGraphDefinition(joins());
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([
      {
        path: 'transforms[1].idle_timeout_seconds',
        message: expect.stringMatching(/^is not set: .*a table that stops changing holds/),
      },
    ]);
    if (!result.valid) throw new Error('invalid');
    expect(result.graph.sources.map((s) => s.start)).toEqual(['latest', 'latest', 'earliest']);
    const quiet = joins();
    quiet.transforms[1]!['idle_timeout_seconds'] = 10;
    expect(validateGraphDefinition(quiet).warnings).toEqual([]);
  });

  it('names inputs that resolve to nothing at their index', () => {
    const input = joins();
    input.transforms[0]!['inputs'] = ['orders', 'payment'];
    expect(errorsOf(input)).toEqual([
      {
        path: 'transforms[0].inputs[1]',
        message:
          'names no source or transform (known: orders, payments, customers, paid, enriched)',
      },
    ]);
  });

  it('wants two inputs, a key path, and an interval for two streams', () => {
    const input = joins();
    input.transforms[0] = { id: 'paid', type: 'join', inputs: ['orders'], on: 'a..b' };
    input.transforms[1] = { id: 'enriched', type: 'join', inputs: ['orders', 'payments'], on: 'x' };
    expect(errorsOf(input)).toEqual([
      { path: 'transforms[0].inputs', message: 'must be two inputs, [left, right]' },
      {
        path: 'transforms[0].on',
        message: 'must be a field path, or { left: <path>, right: <path> }',
      },
      {
        path: 'transforms[1].within_seconds',
        message: 'is required for a join of two streams (or before_seconds and after_seconds)',
      },
    ]);
  });

  it('refuses the options of the other kind of join', () => {
    const input = joins();
    Object.assign(input.transforms[0]!, { on_missing: 'skip', before_seconds: 60 });
    Object.assign(input.transforms[1]!, { kind: 'left', within_seconds: 5 });
    expect(errorsOf(input)).toEqual([
      { path: 'transforms[0].within_seconds', message: expect.stringMatching(/one or the other/) },
      {
        path: 'transforms[0].on_missing',
        message: 'applies to a table join; payments is a stream',
      },
      {
        path: 'transforms[1].kind',
        message:
          'applies to a join of two streams; a table join keeps a record with no row by on_missing: emit',
      },
      {
        path: 'transforms[1].within_seconds',
        message:
          "applies to a join of two streams; customers is a table, joined at each record's event time",
      },
    ]);
  });

  it('keys a table by its own key: a table join names only the left path', () => {
    const input = joins();
    input.transforms[1]!['on'] = { left: 'customer_id', right: 'id' };
    expect(errorsOf(input)).toEqual([
      {
        path: 'transforms[1].on',
        message:
          "must be the left input's key path: the rows of the table customers are keyed by its key (customer_id)",
      },
    ]);
  });

  it('reads a table only as the right input of a join', () => {
    const input = joins();
    input.transforms[1]!['inputs'] = ['customers', 'orders'];
    input.sinks.push({ id: 'rows', input: 'customers', topic: 'rows' });
    expect(errorsOf(input).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'transforms[1].inputs[0]: reads the table customers: a table source can only be the right input of a join',
      'sinks[2].input: reads the table customers: a table source can only be the right input of a join',
    ]);
  });

  it('lets only sinks read a join, and a select not name the result’s own fields', () => {
    const input = joins();
    input.transforms.push({ id: 'f', type: 'filter', input: 'paid', field: 'x', op: 'exists' });
    input.transforms[0]!['select'] = { key: 'left.id', ok: 'both.id' };
    input.sinks[0]!['input'] = 'f';
    expect(errorsOf(input).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'transforms[0].select.key: is a field every join result has; name it otherwise',
      'transforms[0].select.ok: must be left.<path> or right.<path>, a field of that side’s payload',
      'transforms[2].input: reads the join paid, whose output is results, not events: only sinks may read it',
    ]);
  });

  it('names join among the transform types of a graph', () => {
    const input = joins();
    input.transforms[0]!['type'] = 'joinn';
    expect(errorsOf(input)).toEqual([
      {
        path: 'transforms[0].type',
        message: 'must be one of filter, map, reduce, window, branch, enrich, join',
      },
    ]);
  });

  it('refuses a self-join and a key on a stream', () => {
    const input = joins();
    input.transforms[0]!['inputs'] = ['orders', 'orders'];
    input.sources[1]!['key'] = 'id';
    expect(errorsOf(input).map((e) => `${e.path}: ${e.message}`)).toEqual([
      'sources[1].key: applies to a table source (as: table) only',
      'transforms[0].inputs[1]: is the left input too: give each side a source of its own',
    ]);
  });

  it('gives a table its kind and key in the state meaning, and leaves streams’ as they were', () => {
    const result = validateGraphDefinition(joins());
    if (!result.valid) throw new Error('invalid');
    const [sources] = stateMeaning(result.graph) as [unknown[]];
    expect(sources).toEqual([
      ['orders', 'orders', ['order.placed']],
      ['payments', 'payments', []],
      ['customers', 'customers', [], 'table', 'customer_id'],
    ]);
  });
});
