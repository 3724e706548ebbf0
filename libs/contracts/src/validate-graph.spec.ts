import { isGraphInput } from './graph-definition';
import { validateGraphDefinition } from './validate-graph';

/** The pipeline-graph issue's example, as a user would write it. */
const example = () => ({
  version: 1,
  name: 'revenue-by-route',
  sources: [
    { id: 'orders', topic: 'orders', event_types: ['order.placed'], start: 'earliest' },
    { id: 'refunds', topic: 'refunds', event_types: ['order.refunded'] },
  ],
  transforms: [
    { id: 'paid', type: 'filter', input: 'orders', field: 'status', op: 'eq', value: 'paid' },
    {
      id: 'router',
      type: 'branch',
      input: 'paid',
      field: 'region',
      branches: { uk: 'gbp', us: 'usd' },
    },
    {
      id: 'daily',
      type: 'window',
      input: 'router.gbp',
      config: { window_type: 'tumbling', size_seconds: 86400 },
      aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
    },
  ] as Array<Record<string, unknown>>,
  sinks: [
    { id: 'out', input: 'daily', topic: 'daily_gbp' },
    { id: 'us_orders', input: 'router.usd', topic: 'us_orders' },
    { id: 'refunds_out', input: 'refunds', topic: 'refunds_copy' },
  ] as Array<Record<string, unknown>>,
});

const errorsOf = (input: unknown) => validateGraphDefinition(input).errors;

describe('validateGraphDefinition', () => {
  it('accepts the example and fills in the defaults', () => {
    const result = validateGraphDefinition(example());
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    if (!result.valid) throw new Error('invalid');
    expect(result.graph.sources.map((s) => s.start)).toEqual(['earliest', 'latest']);
    expect(result.graph).toMatchObject({ enabled: true, description: null });
    expect(result.graph.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('tells a graph from a linear definition by its keys', () => {
    expect(isGraphInput(example())).toBe(true);
    expect(isGraphInput({ name: 'x', operators: [], output: 'o' })).toBe(false);
    expect(isGraphInput([])).toBe(false);
  });

  it('refuses a repeated id, naming the first holder', () => {
    const input = example();
    input.sinks[2]!['id'] = 'paid';
    expect(errorsOf(input)).toEqual([
      { path: 'sinks[2].id', message: 'is already the id of transforms[0]' },
    ]);
  });

  it('refuses inputs that resolve to nothing, to a sink, or to a route that is not there', () => {
    const input = example();
    input.transforms[0]!['input'] = 'order';
    input.sinks[0]!['input'] = 'us_orders';
    input.sinks[1]!['input'] = 'router.eur';
    input.sinks[2]!['input'] = 'paid.x';
    expect(errorsOf(input)).toEqual([
      {
        path: 'transforms[0].input',
        message: 'names no source or transform (known: orders, refunds, paid, router, daily)',
      },
      { path: 'sinks[0].input', message: 'is a sink (sinks[1]): a sink has no output to read' },
      {
        path: 'sinks[1].input',
        message: 'names no route of the branch router (its routes: gbp, usd)',
      },
      { path: 'sinks[2].input', message: 'addresses a route of paid, which is not a branch' },
    ]);
  });

  it('lets a source or a branch route feed several, and nothing else', () => {
    const input = example();
    input.sinks.push({ id: 'orders_copy', input: 'orders', topic: 'orders_copy' });
    input.sinks.push({ id: 'gbp_orders', input: 'router.gbp', topic: 'gbp_orders' });
    expect(errorsOf(input)).toEqual([]);
    input.sinks.push({ id: 'paid_copy', input: 'paid', topic: 'paid_copy' });
    expect(errorsOf(input)).toEqual([
      {
        path: 'sinks[5].input',
        message:
          'reads paid, which transforms[1] reads already: only a source or a branch may feed several',
      },
    ]);
  });

  it('lets only sinks read a reduce or a window', () => {
    const input = example();
    input.transforms.push({
      id: 'again',
      type: 'filter',
      input: 'daily',
      field: 'value',
      op: 'gt',
      value: 1,
    });
    input.sinks[0]!['input'] = 'again';
    expect(errorsOf(input)).toEqual([
      {
        path: 'transforms[3].input',
        message:
          'reads the window daily, whose output is results, not events: only sinks may read it',
      },
    ]);
  });

  it('refuses a cycle once, at its first member', () => {
    const input = example();
    input.transforms[0]!['input'] = 'router.usd';
    input.sinks[1]!['input'] = 'refunds';
    const errors = errorsOf(input);
    expect(errors).toEqual([
      { path: 'transforms[0].input', message: 'makes a cycle: paid → router → paid' },
    ]);
    const three = example();
    three.transforms[0]!['input'] = 'later';
    three.transforms.push({
      id: 'later',
      type: 'map',
      input: 'router',
      field: 'x',
      transform: 'trim',
    });
    three.sinks[1]!['input'] = 'refunds';
    expect(errorsOf(three)).toEqual([
      { path: 'transforms[0].input', message: 'makes a cycle: paid → router → later → paid' },
    ]);
  });

  it('checks topics as Kafka will, and a sink writing its own source is a feedback loop', () => {
    const input = example();
    (input.sources[1] as Record<string, unknown>)['topic'] = '..';
    input.sinks[0]!['topic'] = 'orders';
    input.sinks[1]!['topic'] = 'sluice.dlq';
    input.sinks[2]!['topic'] = 'x'.repeat(245);
    expect(errorsOf(input)).toEqual([
      { path: 'sources[1].topic', message: 'cannot be "." or ".." (Kafka refuses them)' },
      {
        path: 'sinks[0].topic',
        message:
          "is one of this pipeline's sources: the pipeline would read its own results (a feedback loop)",
      },
      { path: 'sinks[1].topic', message: "is Sluice's internal topic sluice.dlq" },
      {
        path: 'sinks[2].topic',
        message: `makes the topic ${'x'.repeat(60)}…, which must be at most 249 characters (Kafka's limit), not 250`,
      },
    ]);
  });

  it('takes earliest, latest or a zoned ISO time as a start, nothing else', () => {
    const input = example();
    (input.sources[0] as Record<string, unknown>)['start'] = '2026-11-01T00:00:00Z';
    expect(errorsOf(input)).toEqual([]);
    (input.sources[0] as Record<string, unknown>)['start'] = 'yesterday';
    (input.sources[1] as Record<string, unknown>)['start'] = '2026-11-01T00:00:00';
    expect(errorsOf(input).map((e) => e.path)).toEqual(['sources[0].start', 'sources[1].start']);
  });

  it('refuses two sources of one topic with different starts (a pipeline has one position in a partition)', () => {
    const input = example();
    input.sources.push({ id: 'more_orders', topic: 'orders', event_types: ['order.placed'] });
    expect(errorsOf(input)).toEqual([
      {
        path: 'sources[2].topic',
        message:
          'starts orders at latest, but source orders reads it from earliest: the sources of one topic share its start',
      },
    ]);
    (input.sources[2] as Record<string, unknown>)['start'] = 'earliest';
    expect(errorsOf(input)).toEqual([]);
  });

  it("reports the shape's and the rules' problems together, in document order", () => {
    const input = example();
    input.transforms[1]!['colour'] = 'red';
    input.transforms[2]!['config'] = {
      window_type: 'sliding',
      size_seconds: 60,
      slide_seconds: 120,
    };
    input.transforms[2]!['input'] = 'nowhere';
    input.sinks[0]!['topic'] = 'bad topic';
    expect(errorsOf(input)).toEqual([
      { path: 'transforms[1].colour', message: 'is not a known field' },
      expect.objectContaining({ path: 'transforms[2].input' }),
      {
        path: 'transforms[2].config.slide_seconds',
        message: 'must not exceed size_seconds: records would fall between windows',
      },
      expect.objectContaining({ path: 'sinks[0].topic' }),
    ]);
  });

  it('warns of a node that feeds nothing', () => {
    const input = example();
    input.sinks.pop();
    const result = validateGraphDefinition(input);
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([
      { path: 'sources[1].id', message: 'feeds no transform or sink: its records go nowhere' },
    ]);
  });

  it('warns of a route nothing reads when the branch is read by route only', () => {
    const input = example();
    input.sinks.splice(1, 1);
    expect(validateGraphDefinition(input).warnings).toEqual([
      {
        path: 'transforms[1].branches',
        message: 'sends events to the route usd, which nothing reads: they go nowhere',
      },
    ]);
  });

  it('reads a linear definition with a stray graph key as linear', () => {
    expect(isGraphInput({ name: 'x', operators: [], output: 'o', sinks: [] })).toBe(false);
  });

  it('needs a source and a sink, and node ids without dots', () => {
    expect(errorsOf({ name: 'n', sources: [], sinks: [] })).toEqual([
      { path: 'sources', message: 'must have at least 1 item(s)' },
      { path: 'sinks', message: 'must have at least 1 item(s)' },
    ]);
    const input = example();
    input.sinks[0]!['id'] = 'a.b';
    expect(errorsOf(input)).toEqual([
      {
        path: 'sinks[0].id',
        message: 'must be an id of letters, digits, `_` and `-` (at most 64, no dots)',
      },
    ]);
  });
});
