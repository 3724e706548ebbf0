import { parseLookupSpec } from '../commands/preview';
import { age, count, renderTable } from './printer';

describe('printer', () => {
  it('renders a borderless table padded to the widest cell, headers upper-cased', () => {
    expect(
      renderTable(
        ['name', 'version'],
        [
          ['daily-revenue', '1'],
          ['x', '12'],
        ],
      ).split('\n'),
    ).toEqual(['NAME            VERSION', 'daily-revenue   1', 'x               12']);
  });

  it('groups counts and gives ages as kubectl does', () => {
    expect(count(1234567)).toBe('1,234,567');
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(age('2026-11-30T11:59:15Z', now)).toBe('45s');
    expect(age('2026-11-30T11:00:00Z', now)).toBe('60m');
    expect(age('2026-11-29T12:00:00Z', now)).toBe('24h');
    expect(age('2026-11-20T12:00:00Z', now)).toBe('10d');
    expect(age(null, now)).toBe('-');
  });
});

describe('--lookup', () => {
  it('takes source=file with an optional key field', () => {
    expect(parseLookupSpec('customers=data/c.jsonl:customer_id')).toEqual({
      source: 'customers',
      path: 'data/c.jsonl',
      keyField: 'customer_id',
    });
    expect(parseLookupSpec('t=rows.jsonl')).toEqual({
      source: 't',
      path: 'rows.jsonl',
      keyField: 'id',
    });
    expect(() => parseLookupSpec('no-equals-sign')).toThrow('--lookup takes');
  });
});
