import { verify } from './verify';
import type { KeyedRecord } from './verify';

const result = (group: string, start: string, value: number): KeyedRecord => ({
  key: group,
  value: {
    pipeline_id: 'p',
    group,
    function: 'sum',
    value,
    count: 1,
    window: { start, end: `${start}+1` },
    final: true,
  },
});

describe('the chaos verifier', () => {
  const expected = [result('gbp', 'd1', 10), result('usd', 'd1', 20), result('gbp', 'd2', 30)];

  it('finds nothing wrong in the same results in another order, whatever the key order', () => {
    const reordered = [...expected].reverse().map(({ key, value }) => ({
      key,
      value: Object.fromEntries(Object.entries(value as object).reverse()),
    }));
    expect(verify(expected, reordered)).toMatchObject({ lost: 0, duplicated: 0, wrong: 0 });
  });

  it('counts a missing result as lost, a second copy as duplicated, another value as wrong', () => {
    const received = [result('gbp', 'd1', 10), result('gbp', 'd1', 10), result('usd', 'd1', 21)];
    const verdict = verify(expected, received);
    expect(verdict).toMatchObject({ expected: 3, received: 3, lost: 1, duplicated: 1, wrong: 1 });
    expect(verdict.examples.lost[0]).toContain('"d2"');
    expect(verdict.examples.wrong[0]).toContain('expected');
  });

  it('counts a result the reference does not have as wrong', () => {
    const verdict = verify(expected, [...expected, result('eur', 'd1', 5)]);
    expect(verdict).toMatchObject({ lost: 0, duplicated: 0, wrong: 1 });
  });
});
