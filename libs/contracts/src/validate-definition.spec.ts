import { parseDefinitionText, formatOfContentType } from './parse-definition';
import { DEFAULT_PROCESSOR_GROUP, processorGroupOf } from './definition';
import { validateDefinition } from './validate-definition';

const dailyRevenue = {
  id: '6f1c2a9e-3b7d-4c1e-9a55-0d2f7e8b9c10',
  name: 'daily-revenue',
  description: 'Paid order revenue per currency per day',
  source_event_types: ['order.placed'],
  operators: [
    { type: 'filter', field: 'status', value: 'paid', op: 'eq' },
    {
      type: 'window',
      config: {
        window_type: 'tumbling',
        size_seconds: 86400,
        slide_seconds: null,
        session_timeout_seconds: null,
      },
      aggregation: { type: 'reduce', field: 'total', function: 'sum', group_by: 'currency' },
    },
  ],
  enabled: true,
  output: 'daily_revenue',
};

function errorsOf(input: unknown) {
  const result = validateDefinition(input);
  if (result.valid) throw new Error('expected the definition to be rejected');
  return result.errors;
}

function withOperators(...operators: unknown[]) {
  return { name: 'p', output: 'out', operators };
}

describe('validateDefinition', () => {
  it('accepts an AllSource PipelineConfig verbatim', () => {
    const result = validateDefinition(dailyRevenue);
    expect(result.valid).toBe(true);
    if (result.valid) expect(result.definition).toEqual(dailyRevenue);
  });

  it('fills in the defaults: a generated UUID, every event type, enabled', () => {
    const result = validateDefinition({ name: 'minimal', operators: [], output: 'o' });
    expect(result.valid).toBe(true);
    if (!result.valid) return;
    expect(result.definition.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.definition).toMatchObject({
      source_event_types: [],
      enabled: true,
      description: null,
    });
  });

  it('takes a processor group, kept as written and absent when not written', () => {
    const grouped = validateDefinition({ ...dailyRevenue, processor_group: 'bars.processor' });
    expect(grouped.valid && grouped.definition.processor_group).toBe('bars.processor');
    expect(grouped.valid && processorGroupOf(grouped.definition)).toBe('bars.processor');
    const plain = validateDefinition(dailyRevenue);
    expect(plain.valid && 'processor_group' in plain.definition).toBe(false);
    expect(plain.valid && processorGroupOf(plain.definition)).toBe(DEFAULT_PROCESSOR_GROUP);
    expect(errorsOf({ ...dailyRevenue, processor_group: 'no spaces' })).toEqual([
      {
        path: 'processor_group',
        message: 'must be a processor group, a CONSUMER_GROUP (letters, digits, `.`, `_`, `-`)',
      },
    ]);
  });

  it('reports every problem at once, each with its JSON path', () => {
    const errors = errorsOf({
      id: 'not-a-uuid',
      name: '',
      operators: [
        { type: 'filter', field: 'status', op: 'like', value: 'x' },
        { type: 'map', field: 'name', transform: 'reverse' },
        {
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 0 },
          aggregation: { type: 'reduce', field: 'x', function: 'median' },
        },
      ],
      output: 'bad topic!',
      colour: 'blue',
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: 'id', message: 'must be a uuid' },
        { path: 'name', message: 'must not be empty' },
        { path: 'operators[0].op', message: expect.stringContaining('must be one of eq, ne, gt') },
        { path: 'operators[1].transform', message: expect.stringContaining('multiply:<number>') },
        { path: 'operators[2].config.size_seconds', message: 'must be greater than 0' },
        {
          path: 'operators[2].aggregation.function',
          message: 'must be one of count, sum, avg, min, max',
        },
        { path: 'output', message: expect.stringContaining('Kafka topic name') },
        { path: 'colour', message: 'is not a known field' },
      ]),
    );
    expect(errors).toHaveLength(8);
  });

  it('rejects unknown keys inside operators and window configs with their paths', () => {
    expect(
      errorsOf(withOperators({ type: 'filter', field: 'a', op: 'eq', value: 1, extra: true })),
    ).toEqual([{ path: 'operators[0].extra', message: 'is not a known field' }]);
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 5, sise: 1 },
          aggregation: { type: 'reduce', function: 'count' },
        }),
      ),
    ).toEqual([{ path: 'operators[0].config.sise', message: 'is not a known field' }]);
  });

  it('names an unknown operator type', () => {
    expect(errorsOf(withOperators({ type: 'join', field: 'a' }))).toEqual([
      {
        path: 'operators[0].type',
        message: 'must be one of filter, map, reduce, window, branch, enrich',
      },
    ]);
    expect(errorsOf(withOperators({ field: 'a' }))).toEqual([
      { path: 'operators[0].type', message: 'is required' },
    ]);
  });

  it('names missing required fields', () => {
    expect(errorsOf({ operators: [] })).toEqual(
      expect.arrayContaining([
        { path: 'name', message: 'is required' },
        { path: 'output', message: 'is required' },
      ]),
    );
    expect(errorsOf(withOperators({ type: 'reduce', function: 'sum' }))).toEqual([
      { path: 'operators[0].field', message: 'is required for sum' },
    ]);
    expect(errorsOf(withOperators({ type: 'filter', field: 'a', op: 'eq' }))).toEqual([
      { path: 'operators[0].value', message: 'is required for eq' },
    ]);
  });

  it('checks filter values against their op', () => {
    expect(errorsOf(withOperators({ type: 'filter', field: 'a', op: 'gt', value: '5' }))).toEqual([
      { path: 'operators[0].value', message: 'must be a finite number for gt' },
    ]);
    expect(errorsOf(withOperators({ type: 'filter', field: 'a', op: 'in', value: 'x' }))).toEqual([
      { path: 'operators[0].value', message: 'must be an array for in' },
    ]);
    expect(
      validateDefinition(withOperators({ type: 'filter', field: 'a', op: 'exists' })).valid,
    ).toBe(true);
  });

  it('rejects a sliding window whose slide exceeds its size', () => {
    const errors = errorsOf(
      withOperators({
        type: 'window',
        config: { window_type: 'sliding', size_seconds: 60, slide_seconds: 120 },
        aggregation: { type: 'reduce', function: 'count' },
      }),
    );
    expect(errors).toEqual([
      {
        path: 'operators[0].config.slide_seconds',
        message: expect.stringContaining('must not exceed size_seconds'),
      },
    ]);
  });

  it('rejects a sliding window without a slide and a session without a timeout', () => {
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'sliding', size_seconds: 60 },
          aggregation: { type: 'reduce', function: 'count' },
        }),
      ),
    ).toEqual([
      { path: 'operators[0].config.slide_seconds', message: 'is required for a sliding window' },
    ]);
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'session', size_seconds: 60 },
          aggregation: { type: 'reduce', function: 'count' },
        }),
      ),
    ).toEqual([
      {
        path: 'operators[0].config.session_timeout_seconds',
        message: 'is required for a session window',
      },
    ]);
  });

  it('rejects negative and zero sizes and sub-millisecond precision', () => {
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'session', session_timeout_seconds: -1 },
          aggregation: { type: 'reduce', function: 'count' },
        }),
      ),
    ).toEqual([
      {
        path: 'operators[0].config.session_timeout_seconds',
        message: 'must be a number greater than 0',
      },
    ]);
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 0.0001 },
          aggregation: { type: 'reduce', function: 'count' },
        }),
      ),
    ).toEqual([
      {
        path: 'operators[0].config.size_seconds',
        message: 'must be a whole number of milliseconds',
      },
    ]);
  });

  it('rejects a window whose aggregation is not a reduce', () => {
    expect(
      errorsOf(
        withOperators({
          type: 'window',
          config: { window_type: 'tumbling', size_seconds: 5 },
          aggregation: { type: 'filter', field: 'a', op: 'eq', value: 1 },
        }),
      ),
    ).toEqual(
      expect.arrayContaining([
        { path: 'operators[0].aggregation.type', message: 'must be "reduce"' },
      ]),
    );
  });

  it('requires a reduce or window to be the last operator', () => {
    expect(
      errorsOf(
        withOperators(
          { type: 'reduce', function: 'count' },
          { type: 'filter', field: 'a', op: 'exists' },
        ),
      ),
    ).toEqual([
      { path: 'operators[0].type', message: expect.stringContaining('must be the last operator') },
    ]);
  });

  it('accepts multi-field group_by and $. paths, and rejects malformed paths', () => {
    expect(
      validateDefinition(
        withOperators({
          type: 'reduce',
          function: 'count',
          group_by: ['$.metadata.source', 'customer.tier'],
        }),
      ).valid,
    ).toBe(true);
    expect(errorsOf(withOperators({ type: 'reduce', function: 'count', group_by: [] }))).toEqual([
      {
        path: 'operators[0].group_by',
        message: 'must be a field path, a non-empty array of field paths, or null',
      },
    ]);
    expect(errorsOf(withOperators({ type: 'map', field: 'a..b', transform: 'trim' }))).toEqual([
      { path: 'operators[0].field', message: expect.stringContaining('must be a field path') },
    ]);
  });

  it('rejects a body that is not an object', () => {
    expect(errorsOf([1, 2])).toEqual([{ path: '$', message: 'must be object' }]);
    expect(errorsOf(null)).toEqual([{ path: '$', message: 'must be object' }]);
  });
});

describe('parseDefinitionText', () => {
  it('reads YAML with the same shape as JSON', () => {
    const yaml = `
name: daily-revenue
source_event_types: [order.placed]
operators:
  - { type: filter, field: status, op: eq, value: paid }
  - type: window
    config: { window_type: tumbling, size_seconds: 86400 }
    aggregation: { type: reduce, field: total, function: sum, group_by: currency }
output: daily_revenue
`;
    const parsed = parseDefinitionText(yaml, 'yaml');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.documents).toHaveLength(1);
    const result = validateDefinition(parsed.documents[0]);
    expect(result.valid).toBe(true);
  });

  it('reads several YAML documents and JSON arrays', () => {
    const parsed = parseDefinitionText('name: a\n---\nname: b\n', 'yaml');
    expect(parsed).toEqual({ ok: true, documents: [{ name: 'a' }, { name: 'b' }] });
    expect(parseDefinitionText('[{"name":"a"},{"name":"b"}]', 'json')).toEqual({
      ok: true,
      documents: [{ name: 'a' }, { name: 'b' }],
    });
  });

  it('reports syntax errors at the root', () => {
    const json = parseDefinitionText('{"name": ', 'json');
    expect(json.ok).toBe(false);
    if (!json.ok)
      expect(json.errors[0]).toEqual({
        path: '$',
        message: expect.stringContaining('not valid JSON'),
      });
    const yaml = parseDefinitionText('name: [unclosed', 'yaml');
    expect(yaml.ok).toBe(false);
    if (!yaml.ok) expect(yaml.errors[0]!.message).toContain('not valid YAML');
  });

  it('reports aliases without an anchor and circular aliases instead of throwing', () => {
    // Found by the admin's fuzz test: both were 500s.
    for (const text of ['*!', 'name: *a', '&a [*a]']) {
      const parsed = parseDefinitionText(text, 'yaml');
      expect(parsed).toEqual({
        ok: false,
        errors: [{ path: '$', message: expect.stringContaining('not valid YAML') }],
      });
    }
  });

  it('tells YAML content types from JSON ones', () => {
    expect(formatOfContentType('application/yaml')).toBe('yaml');
    expect(formatOfContentType('application/x-yaml; charset=utf-8')).toBe('yaml');
    expect(formatOfContentType('text/yaml')).toBe('yaml');
    expect(formatOfContentType('application/json')).toBe('json');
    expect(formatOfContentType(undefined)).toBe('json');
  });
});

describe('parseDefinitionText, a YAML list', () => {
  it('is several definitions, as a JSON array is (what `sluice get -o yaml` prints)', () => {
    const parsed = parseDefinitionText('- name: a\n  output: x\n- name: b\n  output: y\n', 'yaml');
    expect(parsed).toEqual({
      ok: true,
      documents: [
        { name: 'a', output: 'x' },
        { name: 'b', output: 'y' },
      ],
    });
  });
});
