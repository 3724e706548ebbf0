import type { ReduceResult } from '@sluice/contracts';

import { PipelineTestDriver, orderEvent } from '../testing';

const ID = '00000000-0000-4000-8000-0000000000b1';

function reduce(operator: Record<string, unknown>) {
  return PipelineTestDriver.create({
    id: ID,
    name: 'r',
    output: 'o',
    operators: [{ type: 'reduce', ...operator }],
  });
}

const at = (i: number) => Date.UTC(2026, 10, 29, 10, 0, i);

describe('reduce', () => {
  it.each([
    ['count', [1, 2, 3]],
    ['sum', [5, 7.5, 10]],
    ['avg', [5, 7.5, 7.5]],
    ['min', [5, 5, 5]],
    ['max', [5, 10, 10]],
  ])('%s publishes the running value on every update', (fn, expected) => {
    const driver = reduce({ field: 'total', function: fn });
    driver.send(
      orderEvent(at(1), { total: 5 }),
      orderEvent(at(2), { total: 10 }),
      orderEvent(at(3), { total: 7.5 }),
    );
    const values = driver.readValues() as ReduceResult[];
    expect(values.map((v) => v.value)).toEqual(fn === 'sum' ? [5, 15, 22.5] : expected);
    expect(values[0]).toEqual({ pipeline_id: ID, group: null, function: fn, value: expected[0] });
  });

  it('keys results by group, and by pipeline id without group_by', () => {
    const grouped = reduce({ field: 'total', function: 'sum', group_by: 'currency' });
    grouped.send(
      orderEvent(at(1), { currency: 'gbp' }),
      orderEvent(at(2), { currency: 'usd' }),
      orderEvent(at(3), { currency: 'gbp' }),
    );
    expect(grouped.readResults().map((r) => [r.key, (r.value as ReduceResult).value])).toEqual([
      ['gbp', 10],
      ['usd', 10],
      ['gbp', 20],
    ]);
    const ungrouped = reduce({ function: 'count' });
    ungrouped.send(orderEvent(at(1)));
    expect(ungrouped.readResults()[0]!.key).toBe(ID);
  });

  it('puts events without the group field in the group "default"', () => {
    const driver = reduce({ function: 'count', group_by: 'customer.tier' });
    driver.send(orderEvent(at(1)));
    expect((driver.readValues()[0] as ReduceResult).group).toBe('default');
  });

  it('groups by several fields as a JSON array, so no two combinations collide', () => {
    const driver = reduce({ function: 'count', group_by: ['currency', '$.metadata.source'] });
    driver.send(orderEvent(at(1), { currency: 'gbp' }), orderEvent(at(2), { currency: 'a","b' }));
    expect((driver.readValues() as ReduceResult[]).map((v) => v.group)).toEqual([
      '["gbp","web"]',
      '["a\\",\\"b","web"]',
    ]);
  });

  it('skips a missing or non-numeric value instead of counting it as 0', () => {
    const driver = reduce({ field: 'total', function: 'avg' });
    const noTotal = orderEvent(at(2));
    delete noTotal.payload['total'];
    driver.send(
      orderEvent(at(1), { total: 4 }),
      noTotal,
      { ...orderEvent(at(3)), payload: { total: 'n/a' } },
      orderEvent(at(4), { total: 8 }),
    );
    expect((driver.readValues() as ReduceResult[]).map((v) => v.value)).toEqual([4, 6]);
    expect(driver.stats()).toMatchObject({ processed: 4, skipped: 2, emitted: 2 });
  });

  it('dead-letters missing or invalid values under error policies', () => {
    const driver = reduce({
      field: 'total',
      function: 'sum',
      on_missing: 'error',
      on_invalid: 'error',
    });
    const noTotal = orderEvent(at(1));
    delete noTotal.payload['total'];
    driver.send(noTotal, { ...orderEvent(at(2)), payload: { total: '5' } });
    expect(driver.readDeadLetters().map((d) => d.reason)).toEqual([
      'operators[0] (reduce): field total is missing',
      'operators[0] (reduce): field total is a string, sum needs a finite number',
    ]);
  });

  it('counts events with the field present when count names a field', () => {
    const driver = reduce({ field: 'coupon', function: 'count' });
    driver.send({ ...orderEvent(at(1)), payload: { coupon: 'X' } }, orderEvent(at(2)), {
      ...orderEvent(at(3)),
      payload: { coupon: 'Y' },
    });
    expect((driver.readValues() as ReduceResult[]).map((v) => v.value)).toEqual([1, 2]);
  });

  it('sums exactly: 0.1 + 0.2 + 0.3 is 0.6, in any order', () => {
    for (const order of [
      [0.1, 0.2, 0.3],
      [0.3, 0.2, 0.1],
      [0.2, 0.3, 0.1],
    ]) {
      const driver = reduce({ field: 'total', function: 'sum' });
      driver.send(...order.map((total, i) => orderEvent(at(i), { total })));
      expect((driver.readValues().at(-1) as ReduceResult).value).toBe(0.6);
    }
  });

  it('aggregates per route after a branch', () => {
    const driver = PipelineTestDriver.create({
      id: ID,
      name: 'r',
      output: 'o',
      operators: [
        { type: 'branch', field: 'region', branches: { uk: 'eu', us: 'na' } },
        { type: 'reduce', function: 'count', group_by: 'currency' },
      ],
    });
    driver.send(
      orderEvent(at(1), { region: 'uk' }),
      orderEvent(at(2), { region: 'us' }),
      orderEvent(at(3), { region: 'uk' }),
    );
    expect(
      driver
        .readResults()
        .map((r) => [r.key, (r.value as ReduceResult).route, (r.value as ReduceResult).value]),
    ).toEqual([
      ['eu/gbp', 'eu', 1],
      ['na/gbp', 'na', 1],
      ['eu/gbp', 'eu', 2],
    ]);
  });
});
