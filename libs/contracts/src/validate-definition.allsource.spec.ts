// docs/design.md §2 and issue 14: AllSource configs verbatim, every problem in one pass, and
// names checked as Kafka will check them.
import { validateDefinition } from './validate-definition';

const window = (config: Record<string, unknown>, aggregation: Record<string, unknown> = {}) => ({
  type: 'window',
  config,
  aggregation: { type: 'reduce', function: 'count', ...aggregation },
});
const pipeline = (...operators: unknown[]) => ({ name: 'p', output: 'out', operators });

describe("AllSource's nulls", () => {
  it('take group_by: null as no grouping, on a reduce and on a window', () => {
    for (const definition of [
      pipeline({ type: 'reduce', function: 'count', group_by: null }),
      pipeline(window({ window_type: 'tumbling', size_seconds: 60 }, { group_by: null })),
    ]) {
      const result = validateDefinition(definition);
      expect(result).toMatchObject({ valid: true, errors: [], warnings: [] });
    }
  });

  it('slide a sliding window by its size when slide_seconds is null, and say so', () => {
    const result = validateDefinition(
      pipeline(window({ window_type: 'sliding', size_seconds: 600, slide_seconds: null })),
    );
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([
      {
        path: 'operators[0].config.slide_seconds',
        message: "is null: the window slides by its size_seconds (600 s), AllSource's default",
      },
    ]);
  });

  it("give a session window AllSource's 300 s when session_timeout_seconds is null, and say so", () => {
    const result = validateDefinition(
      pipeline(
        window({ window_type: 'session', size_seconds: 0.001, session_timeout_seconds: null }),
      ),
    );
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([
      {
        path: 'operators[0].config.session_timeout_seconds',
        message: "is null: the session gap is AllSource's default, 300 s",
      },
    ]);
  });

  it('warn about fields a window ignores, but not about the nulls AllSource always sends', () => {
    const nulls = validateDefinition(
      pipeline(
        window({
          window_type: 'tumbling',
          size_seconds: 60,
          slide_seconds: null,
          session_timeout_seconds: null,
        }),
      ),
    );
    expect(nulls.warnings).toEqual([]);
    const ignored = validateDefinition(
      pipeline(
        window({
          window_type: 'tumbling',
          size_seconds: 60,
          slide_seconds: 30,
          session_timeout_seconds: 5,
        }),
      ),
    );
    expect(ignored.valid).toBe(true);
    expect(ignored.warnings).toEqual([
      { path: 'operators[0].config.slide_seconds', message: 'is ignored by a tumbling window' },
      {
        path: 'operators[0].config.session_timeout_seconds',
        message: 'is ignored by a tumbling window',
      },
    ]);
    const sliding = validateDefinition(
      pipeline(
        window({
          window_type: 'sliding',
          size_seconds: 60,
          slide_seconds: 30,
          session_timeout_seconds: 5,
        }),
      ),
    );
    expect(sliding.warnings).toEqual([
      {
        path: 'operators[0].config.session_timeout_seconds',
        message: 'is ignored by a sliding window',
      },
    ]);
  });
});

describe('every problem in one pass', () => {
  it('reports a rule broken beside a problem of the shape', () => {
    const result = validateDefinition(
      pipeline(window({ window_type: 'sliding', size_seconds: 60, slide_seconds: 120, colour: 1 })),
    );
    expect(result.errors).toEqual([
      {
        path: 'operators[0].config.slide_seconds',
        message: 'must not exceed size_seconds: records would fall between windows',
      },
      { path: 'operators[0].config.colour', message: 'is not a known field' },
    ]);
  });

  it('lists the problems in document order, a missing key where its object ends', () => {
    const result = validateDefinition({
      output: 'bad topic',
      operators: [
        { type: 'filter', field: 'a', op: 'gt', value: 'x' },
        window({ window_type: 'sliding', size_seconds: 60, slide_seconds: 90 }),
        { type: 'reduce', function: 'sum' },
      ],
      colour: 'blue',
    });
    expect(result.errors.map((e) => e.path)).toEqual([
      'output',
      'operators[0].value',
      'operators[1].type',
      'operators[1].config.slide_seconds',
      'operators[2].field',
      'colour',
      'name',
    ]);
  });

  it('names each problem once', () => {
    const result = validateDefinition(pipeline({ type: 'filter', field: 'a', op: 'like' }));
    expect(result.errors).toEqual([
      { path: 'operators[0].op', message: expect.stringContaining('must be one of eq, ne') },
    ]);
  });
});

describe('topic names, as Kafka checks them', () => {
  const named = (output: string, operators: unknown[] = []) => ({ name: 'p', output, operators });
  const errors = (definition: unknown, options = {}) =>
    validateDefinition(definition, options).errors;

  it('refuses an output whose late topic would be longer than Kafka allows', () => {
    expect(errors(named('o'.repeat(244)))).toEqual([]);
    expect(errors(named('o'.repeat(245)))).toEqual([
      {
        path: 'output',
        message: expect.stringMatching(
          /^makes the topic o+….*which must be at most 249 characters \(Kafka's limit\), not 250$/,
        ),
      },
    ]);
  });

  it("refuses Sluice's and Kafka's internal topics and the processors' sources as output", () => {
    const options = { topicPrefix: 'acme', sourceTopics: ['orders', 'refunds'] };
    for (const [output, reason] of [
      ['acme.pipelines', "is Sluice's internal topic acme.pipelines"],
      ['acme.stats', "is Sluice's internal topic acme.stats"],
      ['acme.dlq', "is Sluice's internal topic acme.dlq"],
      ['acme.6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b9c10.changelog', "is a pipeline's internal topic"],
      ['__consumer_offsets', "is reserved for Kafka's internal topics"],
      ['refunds', 'is a source topic of the processors'],
    ] as const) {
      expect(errors(named(output), options)).toEqual([
        { path: 'output', message: expect.stringContaining(reason) },
      ]);
    }
    expect(errors(named('sluice.dlq'), options)).toEqual([]);
    expect(errors(named('events'))).toEqual([
      { path: 'output', message: expect.stringContaining('a feedback loop') },
    ]);
  });

  it("refuses an enrich source Kafka would refuse, and names that can't be topics", () => {
    expect(
      errors(named('out', [{ type: 'enrich', source: 'customer table', fields: ['tier'] }])),
    ).toEqual([
      {
        path: 'operators[0].source',
        message: 'must be a Kafka topic name: letters, digits, `.`, `_` and `-` only',
      },
    ]);
    expect(errors(named('..'))).toEqual([
      { path: 'output', message: 'cannot be "." or ".." (Kafka refuses them)' },
    ]);
  });

  it("refuses a prefix that would make a stateful pipeline's internal topics too long", () => {
    const stateful = named('out', [{ type: 'reduce', function: 'count' }]);
    expect(errors(stateful, { topicPrefix: 'p'.repeat(190) })).toEqual([]);
    expect(errors(stateful, { topicPrefix: 'p'.repeat(205) })).toEqual([
      { path: 'id', message: expect.stringContaining('which must be at most 249 characters') },
      { path: 'id', message: expect.stringContaining('which must be at most 249 characters') },
    ]);
  });
});

describe('windows that would stall a replica', () => {
  it('refuses a slide that puts an event in more than 10,000 windows, and durations past a century', () => {
    expect(
      validateDefinition(
        pipeline(window({ window_type: 'sliding', size_seconds: 86400, slide_seconds: 0.001 })),
      ).errors,
    ).toEqual([
      {
        path: 'operators[0].config.slide_seconds',
        message: expect.stringContaining('puts each event in 86400000 windows; at most 10000'),
      },
    ]);
    expect(
      validateDefinition(
        pipeline(window({ window_type: 'sliding', size_seconds: 600, slide_seconds: 0.06 })),
      ).valid,
    ).toBe(true);
    expect(
      validateDefinition(pipeline(window({ window_type: 'tumbling', size_seconds: 1e308 }))).errors,
    ).toEqual([
      {
        path: 'operators[0].config.size_seconds',
        message: 'must be at most 3153600000 (100 years)',
      },
    ]);
  });

  it('reports problems of a very deep document without overflowing', () => {
    let value: unknown = 1;
    for (let i = 0; i < 20_000; i++) value = [value];
    const deep = {
      name: 'deep',
      output: '..',
      operators: [{ type: 'filter', field: 'a', op: 'eq', value }],
      colour: 1,
    };
    expect(validateDefinition(deep).errors.map((e) => e.path)).toEqual(['output', 'colour']);
  });
});

describe('a prefix with dots', () => {
  it("still recognizes the pipelines' internal topics under it", () => {
    const options = { topicPrefix: 'team.a' };
    expect(
      validateDefinition(
        {
          name: 'p',
          operators: [],
          output: 'team.a.6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b9c10.changelog',
        },
        options,
      ).errors,
    ).toEqual([
      { path: 'output', message: expect.stringContaining("a pipeline's internal topic") },
    ]);
  });
});
