// npm run bench:operators [-- --events 5000000 --rounds 3]
// Events/s of the compiled operator library against a naive per-event interpreter, measured in
// the same run on the same generated events, pre-parsed and from raw JSON buffers; and the
// processor's source side (stateful inputs sent downstream) run by the graph runner, which runs
// both definition forms, against the linear runner it replaced.
import { parseArgs } from 'node:util';

import { decodeEvent, validateDefinition } from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinition, SluiceEvent } from '@sluice/contracts';
import {
  compilePipeline,
  GraphRun,
  LINEAR_SOURCE_ID,
  PipelineRun,
  planOfLinear,
} from '@sluice/operators';
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';

import { NaiveInterpreter } from './naive-interpreter';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '5000000' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(args.events);
const ROUNDS = Number(args.rounds);

function definitionOf(input: unknown): PipelineDefinition {
  const result = validateDefinition(input);
  if (!result.valid) throw new Error(JSON.stringify(result.errors));
  return result.definition;
}

const dailyRevenue = definitionOf(dailyRevenueDefinition());
const routing = definitionOf({
  name: 'route-orders',
  source_event_types: ['order.placed'],
  output: 'routed_orders',
  operators: [
    { type: 'filter', field: 'total', op: 'gt', value: 20 },
    { type: 'map', field: 'currency', transform: 'uppercase' },
    {
      type: 'branch',
      field: 'region',
      branches: { uk: 'europe', eu: 'europe', us: 'americas', apac: 'asia' },
    },
  ],
});

const log = (message: string) => process.stderr.write(`${message}\n`);

log(`generating ${N.toLocaleString()} orders…`);
// One Buffer per event, as kafkajs hands them over.
let buffers: Buffer[] = generateOrders({ count: N, seed: 1, stepMs: 50 }).map((e) =>
  Buffer.from(JSON.stringify(e)),
);
const bytes = buffers.reduce((sum, b) => sum + b.length, 0);
log(`${(bytes / N).toFixed(0)} bytes per event on average\n`);
let decoded: SluiceEvent[] = [];

interface Outcome {
  emitted: number;
}

function compiledPreParsed(definition: PipelineDefinition): Outcome {
  let emitted = 0;
  const run = new PipelineRun(compilePipeline(definition), {
    result: () => void (emitted += 1),
    late: () => undefined,
    deadLetter: () => undefined,
  });
  let eventTime = -Infinity;
  for (let i = 0; i < N; i++) {
    const event = decoded[i]!;
    run.process(event);
    if (event.time > eventTime) run.advanceTo((eventTime = event.time));
  }
  run.flush();
  return { emitted };
}

function compiledRaw(definition: PipelineDefinition): Outcome {
  let emitted = 0;
  const run = new PipelineRun(compilePipeline(definition), {
    result: () => void (emitted += 1),
    late: () => undefined,
    deadLetter: () => undefined,
  });
  let eventTime = -Infinity;
  for (let i = 0; i < N; i++) {
    const result = decodeEvent(buffers[i]!);
    if (!result.ok) continue;
    run.process(result.event);
    if (result.event.time > eventTime) run.advanceTo((eventTime = result.event.time));
  }
  run.flush();
  return { emitted };
}

/**
 * A source task's work on pre-parsed events: stateless results and stateful inputs counted where
 * the processor sends them (the linear runner, or the graph runner over the linear plan).
 */
function sourceSide(definition: PipelineDefinition, runner: 'linear' | 'graph'): Outcome {
  let emitted = 0;
  const downstream = { add: () => void (emitted += 1) };
  const sink = {
    result: () => void (emitted += 1),
    late: () => undefined,
    deadLetter: () => undefined,
  };
  if (runner === 'linear') {
    const run = new PipelineRun(compilePipeline(definition), sink, { downstream });
    for (let i = 0; i < N; i++) run.process(decoded[i]!);
    return { emitted };
  }
  const plan = planOfLinear(definition, ['events']);
  const run = new GraphRun(plan, sink, { downstream: () => downstream });
  for (let i = 0; i < N; i++) run.process(LINEAR_SOURCE_ID, decoded[i]!);
  return { emitted };
}

function naivePreParsed(definition: PipelineDefinition): Outcome {
  const naive = new NaiveInterpreter(definition);
  for (let i = 0; i < N; i++) naive.process(decoded[i]!.envelope, decoded[i]!.time);
  naive.flush();
  return { emitted: naive.emitted };
}

function naiveRaw(definition: PipelineDefinition): Outcome {
  const naive = new NaiveInterpreter(definition);
  for (let i = 0; i < N; i++) {
    const envelope = JSON.parse(buffers[i]!.toString()) as EventEnvelope;
    naive.process(envelope, Date.parse(envelope.timestamp as string));
  }
  naive.flush();
  return { emitted: naive.emitted };
}

/** The ceiling for raw input: JSON.parse alone, as much as any JSON consumer must do. */
function jsonParseOnly(): Outcome {
  let fields = 0;
  for (let i = 0; i < N; i++)
    fields += (JSON.parse(buffers[i]!.toString()) as EventEnvelope).event_type.length;
  return { emitted: fields > 0 ? 0 : -1 };
}

function measure(label: string, body: () => Outcome): { rate: number; emitted: number } {
  const rates: number[] = [];
  let emitted = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const started = process.hrtime.bigint();
    emitted = body().emitted;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    rates.push(N / seconds);
    log(`  ${label} round ${round}/${ROUNDS}: ${format(N / seconds)} events/s`);
  }
  rates.sort((a, b) => a - b);
  return { rate: rates[Math.floor(rates.length / 2)]!, emitted };
}

function measureAlternating(
  bodies: Array<[string, () => Outcome]>,
): Array<{ rate: number; emitted: number }> {
  const rates = bodies.map((): number[] => []);
  const emitted = bodies.map(() => 0);
  for (let round = 1; round <= ROUNDS; round++) {
    bodies.forEach(([label, body], index) => {
      const started = process.hrtime.bigint();
      emitted[index] = body().emitted;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      rates[index]!.push(N / seconds);
      log(`  ${label} round ${round}/${ROUNDS}: ${format(N / seconds)} events/s`);
    });
  }
  return rates.map((list, index) => {
    list.sort((a, b) => a - b);
    return { rate: list[Math.floor(list.length / 2)]!, emitted: emitted[index]! };
  });
}

const format = (rate: number) => Math.round(rate).toLocaleString('en-US').padStart(11);

const rows: string[] = [];
const pipelines = [
  ['daily revenue (filter → tumbling 1-day sum by currency)', dailyRevenue],
  ['stateless (filter → map → branch)', routing],
] as const;

log('raw JSON buffers');
const ceiling = measure('JSON.parse alone', jsonParseOnly);
rows.push(
  `${'JSON.parse alone (the ceiling for raw input)'.padEnd(56)} raw JSON    ${format(ceiling.rate)}/s`,
);
for (const [name, definition] of pipelines)
  compare(
    name,
    'raw JSON  ',
    () => compiledRaw(definition),
    () => naiveRaw(definition),
    ceiling.rate,
  );

log('decoding every event once for the pre-parsed runs…');
decoded = buffers.map((buffer) => {
  const result = decodeEvent(buffer);
  if (!result.ok) throw new Error(result.reason);
  return result.event;
});
buffers = [];
for (const [name, definition] of pipelines)
  compare(
    name,
    'pre-parsed',
    () => compiledPreParsed(definition),
    () => naivePreParsed(definition),
  );

log('the source side: graph runner against the linear runner');
for (const [name, definition] of pipelines) {
  log(`${name}, source side`);
  // Rounds alternate, so that neither runner always runs on a warmer or a fuller heap.
  const [graph, linear] = measureAlternating([
    ['graph runner ', () => sourceSide(definition, 'graph')],
    ['linear runner', () => sourceSide(definition, 'linear')],
  ]);
  if (graph.emitted !== linear.emitted)
    throw new Error(
      `${name}: the graph runner sent ${graph.emitted}, the linear ${linear.emitted}`,
    );
  rows.push(
    `${name.padEnd(56)} source side graph ${format(graph.rate)}/s  linear ${format(linear.rate)}/s  ×${(graph.rate / linear.rate).toFixed(2)}`,
  );
}

function compare(
  name: string,
  input: string,
  sluice: () => Outcome,
  naive: () => Outcome,
  ceilingRate?: number,
): void {
  log(`${name}, ${input.trim()}`);
  const fast = measure(`sluice ${input}`, sluice);
  const slow = measure(`naive  ${input}`, naive);
  if (fast.emitted !== slow.emitted) {
    throw new Error(
      `${name} ${input}: sluice emitted ${fast.emitted} results, the naive interpreter ${slow.emitted}`,
    );
  }
  const ofCeiling =
    ceilingRate === undefined
      ? ''
      : `  ${((100 * fast.rate) / ceilingRate).toFixed(0)}% of JSON.parse`;
  rows.push(
    `${name.padEnd(56)} ${input}  sluice ${format(fast.rate)}/s  naive ${format(slow.rate)}/s  ×${(fast.rate / slow.rate).toFixed(2)}${ofCeiling}`,
  );
}

console.log(
  `\noperators benchmark: ${N.toLocaleString()} events, median of ${ROUNDS} rounds, node ${process.version}, one core`,
);
for (const row of rows) console.log(row);
