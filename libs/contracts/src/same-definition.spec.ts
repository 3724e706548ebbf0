import { sameDefinition } from './same-definition';
import { validateDefinition } from './validate-definition';

const definition = (overrides: Record<string, unknown> = {}) => {
  const result = validateDefinition({
    id: '00000000-0000-4000-8000-000000000001',
    name: 'daily-revenue',
    operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'paid' }],
    output: 'out',
    ...overrides,
  });
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
};

describe('sameDefinition', () => {
  it('ignores key order and fields beyond the definition', () => {
    const a = definition();
    const reordered = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(sameDefinition(a, reordered)).toBe(true);
    expect(sameDefinition(a, { ...a, version: 7, created_at: 'x' } as typeof a)).toBe(true);
  });

  it('tells apart any change of content, including the id', () => {
    const a = definition();
    expect(sameDefinition(a, definition({ output: 'elsewhere' }))).toBe(false);
    expect(
      sameDefinition(
        a,
        definition({ operators: [{ type: 'filter', field: 'status', op: 'eq', value: 'due' }] }),
      ),
    ).toBe(false);
    expect(sameDefinition(a, definition({ id: '00000000-0000-4000-8000-000000000002' }))).toBe(
      false,
    );
  });
});
