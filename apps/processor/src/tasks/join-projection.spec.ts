// A join's records cross the repartition topic with what the join keeps of them (its `select`),
// made where they were consumed, so the join's partition parses no event it does not report.
// A source task's records are fed to the join's stateful task, as the repartition topic would
// carry them; no broker.
import type { Message } from 'kafkajs';

import { validateGraphDefinition } from '@sluice/contracts';
import type { EventEnvelope, GraphDefinitionInput } from '@sluice/contracts';
import { planOfGraph } from '@sluice/operators';

import { activePipeline } from '../pipelines/active-pipeline';
import { PipelineSet } from '../pipelines/pipeline-set';
import { decodeRepartitionRecord } from '../repartition/repartition-records';
import type { InputMessage } from './input-batch';
import { sourceTask, statefulTask, TOPIC } from './unit-tasks.testing';
import type { LinearStored } from './unit-tasks.testing';

const HOUR = 3_600_000;
const t0 = Date.UTC(2026, 10, 1);

function joinPipeline(version: number, select: Record<string, string>) {
  const input: GraphDefinitionInput = {
    id: '00000000-0000-4000-8000-000000000007',
    name: 'orders paid within an hour',
    sources: [
      { id: 'orders', topic: TOPIC, event_types: ['order.placed'] },
      { id: 'payments', topic: TOPIC, event_types: ['payment.captured'] },
    ],
    transforms: [
      {
        id: 'paid',
        type: 'join',
        inputs: ['orders', 'payments'],
        on: 'key',
        within_seconds: 3600,
        select,
      },
    ],
    sinks: [{ id: 'out', input: 'paid', topic: 'paid' }],
  };
  const validated = validateGraphDefinition(input, { topicPrefix: 'unit' });
  if (!validated.valid) throw new Error(JSON.stringify(validated.errors));
  const stored = {
    ...validated.graph,
    version,
    reset_generation: 0,
    created_at: '2026-11-29T00:00:00.000Z',
    updated_at: '2026-11-29T00:00:00.000Z',
  };
  return activePipeline(stored, planOfGraph(validated.graph), 'unit', () => 1);
}

const event = (type: string, time: number, payload: Record<string, unknown>): EventEnvelope => ({
  id: `${type}-${time}`,
  event_type: type,
  entity_id: `${type}-${time}`,
  timestamp: new Date(time).toISOString(),
  payload: { key: 'k1', ...payload },
});

function joined(select: Record<string, string>) {
  const pipelines = new PipelineSet();
  const pipeline = joinPipeline(1, select);
  pipelines.set(pipeline);
  const known = () => [pipeline.stored as unknown as LinearStored];
  const source = sourceTask(pipelines, known);
  source.adoptCommitted(undefined, undefined);
  source.refresh();
  const repartitioned: Message[] = [];
  source.send = (_topic, message) => repartitioned.push(message);
  const stateful = statefulTask(pipelines, pipeline.id);
  stateful.refresh();
  const out: Array<{ topic: string; value: unknown }> = [];
  stateful.send = (topic, message) => out.push({ topic, value: JSON.parse(String(message.value)) });
  let offset = 0;
  let repartitionOffset = 0;
  /**
   * The source's next transaction of `events`, then the join's partition reading it (each
   * record's text through `alter`).
   */
  const feed = (alter: (text: string) => string, ...events: EventEnvelope[]) => {
    repartitioned.length = 0;
    source.handle(
      events.map((e): InputMessage => ({
        offset: String(offset++),
        key: null,
        value: Buffer.from(JSON.stringify(e)),
        timestamp: '0',
      })),
    );
    source.afterBatch(String(offset));
    source.beforeCommit();
    const records = [...repartitioned];
    stateful.handle(
      records.map((message) => ({
        offset: String(repartitionOffset++),
        key: null,
        value: Buffer.from(alter(String(message.value))),
        timestamp: '0',
      })),
    );
    return records.map((message) => decodeRepartitionRecord(String(message.value)));
  };
  const run = (...events: EventEnvelope[]) => feed((text) => text, ...events);
  return { run, feed, out, pipelines, stateful };
}

describe('a join’s records on the repartition topic', () => {
  it('carry its projection, which the join takes, and the whole event, which a late record is reported with', () => {
    const { run, out } = joined({ total: 'left.total', amount: 'right.amount' });
    const order = event('order.placed', t0, { total: 12.5, note: 'not selected' });
    const payment = event('payment.captured', t0 + 600_000, { amount: 12.5, card: 'x' });
    const records = run(order, payment);
    const events = records.filter((record) => record?.kind === 'event');
    expect(events.map((record) => record.projection)).toEqual([{ total: 12.5 }, { amount: 12.5 }]);
    expect(events.map((record) => JSON.parse(record.eventJson))).toEqual([order, payment]);
    expect(out.filter(({ topic }) => topic === 'paid').map(({ value }) => value)).toMatchObject([
      { key: 'k1', total: 12.5, amount: 12.5 },
    ]);

    // Both sides move a day on; then an order of the first hour comes: late, reported whole.
    out.length = 0;
    run(
      event('order.placed', t0 + 24 * HOUR, { total: 1 }),
      event('payment.captured', t0 + 24 * HOUR, { amount: 2 }),
    );
    const late = event('order.placed', t0 + 1000, { total: 7, note: 'late' });
    run(late);
    expect(
      out.filter(({ topic }) => topic === 'paid.late').map(({ value }) => value),
    ).toMatchObject([{ side: 'left', event: late }]);
  });

  it('is what the join takes, unless it was made under another definition', () => {
    const select = { total: 'left.total', amount: 'right.amount' };
    // A projection that differs from the event shows which of the two the join took.
    const altered = (text: string) => text.replace('"k":{"total":12.5}', '"k":{"total":99}');
    const order = event('order.placed', t0, { total: 12.5 });
    const payment = event('payment.captured', t0 + 600_000, { amount: 3 });
    const same = joined(select);
    same.feed(altered, order, payment);
    expect(same.out.map(({ value }) => value)).toMatchObject([{ total: 99, amount: 3 }]);

    // The definition moved on (version 2) after the source wrote: the event is parsed again.
    const moved = joined(select);
    moved.feed(
      (text) => {
        moved.pipelines.set(joinPipeline(2, select));
        moved.stateful.refresh(); // the join's partition knows it before the record comes
        return altered(text);
      },
      order,
      payment,
    );
    expect(moved.out.map(({ value }) => value)).toMatchObject([{ total: 12.5, amount: 3 }]);
  });
});
