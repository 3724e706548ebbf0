// npm run bench:e2e [-- --events 2000000 --restore-states 1000000 --latency-seconds 20
//                     --baseline <another checkout>/apps/processor/dist/main.js --pipelines 10]
// End to end on the local broker, in one run:
//  (a) the raw kafkajs consume rate of a 6-partition topic: the ceiling of the client we use,
//      as published and as Sluice runs it (patches/kafkajs+2.2.4.patch applied);
//  (b) Sluice's exactly-once rate with one replica running the daily-revenue pipeline over the
//      same topic, until every source and repartition offset is committed; its results are
//      checked against the reference run;
//      with --baseline, another build of the processor (today's code, say) over the same topic
//      in the same run, so the two rates are compared on the same machine at the same time;
//      with --pipelines P, also P daily-revenue pipelines at once over the same topic in one
//      replica (each record decoded once for all of them): the topic's rate against the one
//      pipeline's, the replica's CPU time per pipeline, and every output against its reference;
//  (c) the restore time of one replica's state after a kill -9: a window holding N groups;
//  (d) latency from an event's append to its result's commit at half of (b)'s rate: a stateless
//      pipeline's results, and a window's final results after the watermark passes its end.
// The processor runs as the built app (apps/processor/dist), exactly as users run it.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import { canonicalJson, internalTopics, repartitionTopic } from '@sluice/contracts';
import type { EventEnvelope, PipelineDefinition } from '@sluice/contracts';
import { createKafka, ensureTopics } from '@sluice/kafka';
import { runReference } from '@sluice/operators';
import { dailyRevenueDefinition } from '@sluice/operators/testing';
import { sleep } from '@sluice/testing';
import { logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';

import {
  histogramQuantile,
  paceEvents,
  probePipelines,
  statelessLatencies,
  summary,
  watchCommitted,
  windowLatencies,
} from './support/latency';
import {
  consumedBy,
  DAY,
  definitionOf,
  deleteRunTopics,
  fmt,
  log,
  metricsOf,
  notCommitted,
  notCommittedOf,
  PARTITIONS,
  produce,
  produceOrders,
  produceTicks,
  putPipeline,
  rate,
  rawConsumeRate,
  readRecords,
  startReplica,
  stopProcess,
  transactionsOf,
  brokerCpuSeconds,
  usageOf,
} from './support/kafka-bench';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000000' },
    'restore-states': { type: 'string', default: '1000000' },
    /** Writes a V8 CPU profile of the replica under test to bench/results/. */
    profile: { type: 'boolean', default: false },
    /** Another processor build to measure beside this one (its dist/main.js). */
    baseline: { type: 'string' },
    'latency-seconds': { type: 'string', default: '20' },
    /** Also run this many pipelines at once over the same topic (1: no such run). */
    pipelines: { type: 'string', default: '1' },
  },
});
const PIPELINES = Number(args.pipelines);
const N = Number(args.events);
const STATES = Number(args['restore-states']);
/**
 * Extra V8 flags (`SLUICE_NODE_FLAGS`), to try tunings: given to the replica and to the plain
 * kafkajs consumers alike, beside the flags the processor image runs with.
 */
const NODE_FLAGS = (process.env['SLUICE_NODE_FLAGS'] ?? '')
  .split(' ')
  .filter((flag) => flag.length > 0);

const kafka = createKafka({ clientId: 'sluice-bench-e2e', logLevel: logLevel.NOTHING });
const prefix = `bench-${randomUUID().slice(0, 8)}`;
const topics = internalTopics(prefix);
const replica = (id: string, group: string) =>
  startReplica({ id, prefix, group, nodeFlags: NODE_FLAGS, profile: args.profile });
const LATENCY_SECONDS = Number(args['latency-seconds']);
/**
 * The first seconds of the paced run are left out of the latencies: the first transactions add
 * their partitions and the readers' first fetches find them (about a second, once).
 */
const WARM_UP_MS = 2000;

/** (b) Sluice end to end, one replica, exactly-once, running `definitions` over the source. */
async function sluiceRate(
  admin: Admin,
  definitions: PipelineDefinition[],
  expected: number,
  build: { name: string; main?: string; prefix: string } = { name: 'sluice', prefix },
): Promise<{
  rate: number;
  results: string[][];
  cpuSeconds: number;
  minorFaults: number;
  brokerCpuSeconds: number;
}> {
  const group = `${build.prefix}.processor`;
  await ensureTopics(admin, [
    { topic: internalTopics(build.prefix).pipelines, numPartitions: 1, compacted: true },
  ]);
  for (const definition of definitions)
    await putPipeline(kafka, internalTopics(build.prefix).pipelines, definition, group);
  const bench = startReplica({
    id: `${build.name}-0`,
    prefix: build.prefix,
    group,
    source: `${prefix}.events`,
    nodeFlags: NODE_FLAGS,
    profile: args.profile,
    ...(build.main ? { main: build.main } : {}),
  });
  while ((await consumedBy(bench)) === 0) await sleep(20);
  const started = Date.now();
  const brokerCpuBefore = brokerCpuSeconds();
  const watched = [
    `${prefix}.events`,
    ...definitions.map((definition) => repartitionTopic(definition.id, build.prefix)),
  ];
  // Every watched topic's ends and committed offsets at every poll cost the broker about four
  // requests per topic, ten times a second: a run with more pipelines (more repartition topics)
  // paid for more of them. The source's ends are fixed (produced before the run), so one
  // OffsetFetch a poll follows it; the repartition topics are checked once it is committed.
  let requests = 0;
  const stopCounting = admin.on(admin.events.REQUEST, () => (requests += 1));
  const sourceEnds = await admin.fetchTopicOffsets(`${prefix}.events`);
  let sourceCommitted = false;
  let lastReport = 0;
  for (;;) {
    const sourceLeft: number = sourceCommitted
      ? 0
      : await notCommittedOf(admin, group, `${prefix}.events`, sourceEnds);
    sourceCommitted = sourceLeft === 0;
    const behind = sourceCommitted ? await notCommitted(admin, group, watched) : sourceLeft;
    // The replica's metrics are scraped once a second for the progress line, and at every poll
    // only once nothing is left to commit: a scrape costs the replica CPU (prom-client formats
    // every series), which ten times a second would bill a slower run more per event.
    const report = Date.now() - lastReport > 1000;
    if (behind === 0 || report) {
      const consumed = await consumedBy(bench);
      if (report) {
        lastReport = Date.now();
        log(
          `  ${build.name}: ${fmt(consumed)} source records consumed, ${fmt(behind)} not committed yet`,
        );
      }
      if (behind === 0 && consumed >= expected) break;
    }
    await sleep(100);
  }
  const ms = Date.now() - started;
  stopCounting();
  log(
    `  ${build.name}: the bench's requests to the broker while waiting: ${fmt(requests)} (${fmt(requests / (ms / 1000))}/s)`,
  );
  const { cpuSeconds, minorFaults } = usageOf(bench.child.pid!);
  const transactions = await transactionsOf(bench);
  log(
    `  ${build.name}: ${fmt(transactions.count)} transactions committed (${fmt(transactions.count / (ms / 1000))}/s), ${((1000 * transactions.seconds) / transactions.count).toFixed(1)} ms each on average`,
  );
  const brokerCpu = brokerCpuSeconds() - brokerCpuBefore;
  await stopProcess(bench.child);
  const results: string[][] = [];
  for (const definition of definitions) results.push(await readRecords(kafka, definition.output));
  return {
    rate: rate(expected, ms),
    results,
    cpuSeconds,
    minorFaults,
    brokerCpuSeconds: brokerCpu,
  };
}

/** (c) State of STATES groups in one replica, SIGKILLed; a new replica restores it. */
async function restoreTime(admin: Admin): Promise<void> {
  const definition = definitionOf({
    id: randomUUID(),
    name: 'restore probe: one open window per customer',
    source_event_types: ['visit'],
    operators: [
      {
        type: 'window',
        config: { window_type: 'tumbling', size_seconds: 86400 },
        aggregation: { type: 'reduce', field: 'n', function: 'count', group_by: '$.entity_id' },
      },
    ],
    output: `${prefix}.restore-probe`,
  });
  const base = Date.UTC(2026, 11, 1);
  const visits: EventEnvelope[] = Array.from({ length: STATES }, (_, i) => ({
    event_type: 'visit',
    entity_id: `customer-${i}`,
    timestamp: new Date(base + (i % 3_600_000)).toISOString(),
    payload: { n: 1 },
  }));
  // The same installation (group) as (b): its pipelines' state is current, only this one builds.
  const group = `${prefix}.processor`;
  await putPipeline(kafka, topics.pipelines, definition, group);
  const first = replica('restore-0', group);
  await produce(kafka, `${prefix}.events`, visits, 'restore probe');
  const watched = [`${prefix}.events`, repartitionTopic(definition.id, prefix)];
  for (;;) {
    const behind = await notCommitted(admin, group, watched);
    log(`  building ${fmt(STATES)} window states: ${fmt(behind)} records not committed yet`);
    if (behind === 0) break;
    await sleep(1000);
  }
  await stopProcess(first.child, 'SIGKILL');
  log('  killed the replica (SIGKILL); starting a new one');
  const started = Date.now();
  const second = replica('restore-1', group);
  const restored = () =>
    second.lines
      .filter((line) => line.includes('state restored from the changelog'))
      .map(
        (line) =>
          JSON.parse(line) as { state_entries: number; restore_ms: number; pipeline_id: string },
      )
      .filter((entry) => entry.pipeline_id === definition.id);
  while (restored().reduce((sum, e) => sum + e.state_entries, 0) < STATES) {
    if (Date.now() - started > 120_000) throw new Error('restore did not finish in 120 s');
    await sleep(50);
  }
  const wall = Date.now() - started;
  const assignedAt = second.lines
    .filter((line) => line.includes('"partitions assigned"'))
    .map((line) => (JSON.parse(line) as { time: number }).time)
    .pop();
  const lastRestore = Math.max(
    ...second.lines
      .filter((line) => line.includes('state restored from the changelog'))
      .map((line) => (JSON.parse(line) as { time: number }).time),
  );
  const entries = restored();
  const states = entries.reduce((sum, e) => sum + e.state_entries, 0);
  log(
    `  restored ${fmt(states)} states over ${entries.length} partitions; slowest partition ${Math.max(...entries.map((e) => e.restore_ms))} ms`,
  );
  await stopProcess(second.child);
  const afterAssignment = assignedAt === undefined ? NaN : lastRestore - assignedAt;
  console.log(
    `restore after kill -9: ${fmt(states)} window states restored ${(afterAssignment / 1000).toFixed(2)} s after the partitions were assigned (target <= 5 s)`,
  );
  console.log(
    `  ${(wall / 1000).toFixed(2)} s from the new process's start, which includes the group noticing the dead replica (session timeout 6 s)`,
  );
}

/** (d) Latency at `perSecond` events/s, on a source and an installation of its own. */
async function latency(admin: Admin): Promise<void> {
  const latencyPrefix = `${prefix}-latency`;
  const source = `${latencyPrefix}.events`;
  const pipelinesTopic = internalTopics(latencyPrefix).pipelines;
  await ensureTopics(admin, [
    { topic: source, numPartitions: PARTITIONS },
    { topic: pipelinesTopic, numPartitions: 1, compacted: true },
  ]);
  const [stateless, windowed] = probePipelines(latencyPrefix, [randomUUID(), randomUUID()]).map(
    definitionOf,
  );
  const latencyGroup = `${latencyPrefix}.processor`;
  for (const definition of [stateless!, windowed!])
    await putPipeline(kafka, pipelinesTopic, definition, latencyGroup);
  const probe = startReplica({
    id: 'latency-0',
    prefix: latencyPrefix,
    group: latencyGroup,
    nodeFlags: NODE_FLAGS,
  });
  // The definitions are in the topic before the replica starts: its first join reads the
  // window's repartition topic too; its tasks then restore (nothing) before records flow.
  while (!probe.lines.some((line) => line.includes('"partitions assigned"'))) await sleep(50);
  await sleep(2000);
  // The probes' own throughput first (a burst, until every record is committed): the latency
  // is measured at half of it.
  const burst = Math.min(N, 400_000);
  const base = Date.now() - 3_600_000;
  const probes: EventEnvelope[] = Array.from({ length: burst }, (_, n) => ({
    event_type: 'latency.probe',
    entity_id: `probe-${n % 1000}`,
    timestamp: new Date(base + n).toISOString(),
    payload: { n, status: 'paid', total: 1, currency: 'gbp' },
  }));
  const group = `${latencyPrefix}.processor`;
  const watched = [source, repartitionTopic(windowed!.id, latencyPrefix)];
  const burstStarted = Date.now();
  await produce(kafka, source, probes, 'latency burst');
  while ((await notCommitted(admin, group, watched)) > 0) await sleep(100);
  const probeRate = rate(burst, Date.now() - burstStarted);
  console.log(`latency probes (stateless + 2 s window), one replica: ${fmt(probeRate)} events/s`);
  const perSecond = Math.round(probeRate / 2);
  const watchers = await Promise.all(
    [stateless!, windowed!].map((d) =>
      watchCommitted(kafka, d.output, `${latencyPrefix}.watch.${d.id}`),
    ),
  );
  log(`  sending ${fmt(perSecond)} events/s for ${LATENCY_SECONDS} s`);
  const pacedFrom = Date.now();
  const sent = await paceEvents(kafka, source, perSecond, LATENCY_SECONDS);
  await sleep(3000);
  await Promise.all(watchers.map((w) => w.stop()));
  const metrics = await metricsOf(probe);
  await stopProcess(probe.child);
  const show = (label: string, samples: number[]) => {
    const s = summary(samples);
    console.log(
      `latency ${label}: p50 ${s.p50} ms, p99 ${s.p99} ms, max ${s.max} ms over ${fmt(s.count)} results`,
    );
    return s;
  };
  const statelessSummary = show(
    `append → commit, stateless, at ${fmt(perSecond)} events/s (after ${WARM_UP_MS / 1000} s)`,
    statelessLatencies(watchers[0]!.seen, pacedFrom + WARM_UP_MS),
  );
  show(
    'watermark past end → final window committed',
    windowLatencies(watchers[1]!.seen, sent, pacedFrom + WARM_UP_MS),
  );
  console.log(
    `  stateless p99 target: <= commit interval (100 ms) + 150 ms: ${statelessSummary.p99 <= 250 ? 'met' : 'NOT met'}`,
  );
  // The coordinator's part of it: how long a commit (offsets + EndTxn) took, by bucket bound.
  const commit = (q: number) =>
    histogramQuantile(metrics, 'sluice_processor_transaction_commit_seconds', q);
  const ms = (seconds: number | undefined) =>
    seconds === undefined ? 'n/a' : seconds === Infinity ? '> 2.5 s' : `<= ${seconds * 1000} ms`;
  console.log(`  commits of the probe replica: p50 ${ms(commit(0.5))}, p99 ${ms(commit(0.99))}`);
  // And the replica's own share: how late its event loop ran timers (since it started).
  const gauge = (name: string) =>
    Number(new RegExp(`^sluice_processor_${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN);
  console.log(
    `  its event loop's delay: p99 ${Math.round(1000 * gauge('nodejs_eventloop_lag_p99_seconds'))} ms, max ${Math.round(1000 * gauge('nodejs_eventloop_lag_max_seconds'))} ms`,
  );
}

async function main(): Promise<void> {
  const source = `${prefix}.events`;
  log(`prefix ${prefix}`);
  const { orders, start } = await produceOrders(
    kafka,
    { source, pipelines: topics.pipelines },
    N,
    3,
  );
  const admin = kafka.admin();
  await admin.connect();
  const closing = await produceTicks(kafka, source, start + 12 * DAY);
  const total = N + closing.length;

  log('(a) raw kafkajs consume rate');
  const raw = (parse: boolean, stock: boolean) =>
    rawConsumeRate(source, total, {
      parse,
      stock,
      group: `${prefix}.raw.${parse ? 'parse' : 'plain'}.${stock ? 'stock' : 'sluice'}`,
      nodeFlags: NODE_FLAGS,
    });
  const stockCeiling = await raw(false, true);
  const ceiling = await raw(false, false);
  const parseCeiling = await raw(true, false);
  log('(b) Sluice, one replica, exactly-once, daily revenue');
  const definition = definitionOf(
    dailyRevenueDefinition({ id: randomUUID(), output: `${prefix}.daily_revenue` }),
  );
  const sluice = await sluiceRate(admin, [definition], total);
  const baseline = args.baseline
    ? await sluiceRate(
        admin,
        [{ ...definition, output: `${prefix}.baseline.daily_revenue` }],
        total,
        {
          name: 'baseline',
          main: args.baseline,
          prefix: `${prefix}-baseline`,
        },
      )
    : undefined;
  const reference = runReference(definition, [...orders, ...closing]);
  console.log(`raw kafkajs 2.2.4 consume (as published): ${fmt(stockCeiling)} events/s`);
  console.log(`raw kafkajs consume as Sluice runs it:    ${fmt(ceiling)} events/s`);
  console.log(`  the same + JSON.parse:                  ${fmt(parseCeiling)} events/s`);
  console.log(`sluice exactly-once e2e:                  ${fmt(sluice.rate)} events/s`);
  console.log(
    `  replica per million events:             ${((1e6 * sluice.cpuSeconds) / total).toFixed(2)} s CPU, ${Math.round((1e6 * sluice.minorFaults) / total)} minor page faults`,
  );
  if (baseline) {
    console.log(`baseline (${args.baseline}): ${fmt(baseline.rate)} events/s`);
    console.log(
      `ratio sluice / baseline, same run:        ${(sluice.rate / baseline.rate).toFixed(2)}`,
    );
  }
  console.log(
    `ratio sluice / raw kafkajs as published:  ${(sluice.rate / stockCeiling).toFixed(2)} (target >= 0.80)`,
  );
  console.log(`ratio sluice / raw as Sluice runs it:     ${(sluice.rate / ceiling).toFixed(2)}`);
  console.log(
    `ratio sluice / that + JSON.parse:         ${(sluice.rate / parseCeiling).toFixed(2)}`,
  );
  const expected = reference.results.map((r) => canonicalJson([r.key, r.value])).sort();
  const same = JSON.stringify(expected) === JSON.stringify(sluice.results[0]);
  console.log(
    `results: ${sluice.results[0]!.length} published, ${expected.length} in the reference run: ${same ? 'identical' : 'DIFFERENT'}`,
  );
  if (!same) process.exitCode = 1;
  if (baseline && JSON.stringify(baseline.results) !== JSON.stringify(sluice.results)) {
    console.log('baseline results: DIFFERENT from this build');
    process.exitCode = 1;
  }
  if (PIPELINES > 1) {
    log(`(b) again: ${PIPELINES} daily-revenue pipelines over the same topic, one replica`);
    const many = (name: string) =>
      Array.from({ length: PIPELINES }, (_, i) =>
        definitionOf(
          dailyRevenueDefinition({
            id: randomUUID(),
            output: `${prefix}.${name}.daily_revenue_${i}`,
          }),
        ),
      );
    const definitions = many('many');
    const run = await sluiceRate(admin, definitions, total, {
      name: 'many',
      prefix: `${prefix}-many`,
    });
    const baselineDefinitions = many('many-baseline');
    const baselineRun = baseline
      ? await sluiceRate(admin, baselineDefinitions, total, {
          name: 'many-baseline',
          main: args.baseline!,
          prefix: `${prefix}-many-baseline`,
        })
      : undefined;
    const report = (
      label: string,
      one: { rate: number; cpuSeconds: number; minorFaults: number; brokerCpuSeconds: number },
      ten: typeof run,
    ) => {
      const perMillion = (seconds: number) => ((1e6 * seconds) / total).toFixed(2);
      console.log(
        `${label}${PIPELINES} pipelines over one topic: ${fmt(ten.rate)} events/s of the topic, ${(ten.rate / one.rate).toFixed(2)} of one pipeline's (target >= 0.50)`,
      );
      console.log(
        `  replica CPU, s per million events: one pipeline ${perMillion(one.cpuSeconds)}; ${PIPELINES} pipelines ${perMillion(ten.cpuSeconds)} (${perMillion(ten.cpuSeconds / PIPELINES)} per pipeline)`,
      );
      console.log(
        `  replica minor page faults per million events: one pipeline ${Math.round((1e6 * one.minorFaults) / total)}; ${PIPELINES} pipelines ${Math.round((1e6 * ten.minorFaults) / total)}`,
      );
      console.log(
        `  broker CPU, s per million events:  one pipeline ${perMillion(one.brokerCpuSeconds)}; ${PIPELINES} pipelines ${perMillion(ten.brokerCpuSeconds)}`,
      );
    };
    report('', sluice, run);
    if (baseline && baselineRun) report('baseline: ', baseline, baselineRun);
    const checked = [
      { runOf: run, of: definitions },
      ...(baselineRun ? [{ runOf: baselineRun, of: baselineDefinitions }] : []),
    ];
    let identical = true;
    for (const { runOf, of } of checked) {
      of.forEach((definition, i) => {
        const wanted = runReference(definition, [...orders, ...closing])
          .results.map((r) => canonicalJson([r.key, r.value]))
          .sort();
        if (JSON.stringify(wanted) !== JSON.stringify(runOf.results[i])) {
          console.log(`  pipeline ${i}: results DIFFERENT from its reference run`);
          identical = false;
          process.exitCode = 1;
        }
      });
    }
    if (identical) console.log(`  every pipeline's results: identical to its reference`);
  }
  if (LATENCY_SECONDS > 0) {
    log('(d) latency at half of the probes’ own rate');
    await latency(admin);
  }
  if (STATES > 0) {
    log('(c) restore time');
    await restoreTime(admin);
  }
  await deleteRunTopics(admin, prefix);
  await admin.disconnect();
}

main().catch((error: Error) => {
  log(error.stack ?? error.message);
  process.exit(1);
});
