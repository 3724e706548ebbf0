// docs/design.md §5 under change and failure: replicas join mid-stream, one is SIGKILLed mid-stream, and
// the committed output still equals the reference run exactly — nothing lost, nothing twice.
import { dailyRevenueDefinition, generateOrders } from '@sluice/operators/testing';
import type { EventEnvelope } from '@sluice/contracts';
import { sleep, until } from '@sluice/testing';

import {
  DEFAULT_REPLICA_TRANSACTIONS,
  PROCESSING_GUARANTEES,
} from '../src/config/processor-config';
import type { ProcessingGuarantee } from '../src/config/processor-config';
import { replicaTransactionalId } from '../src/tasks/replica-transaction';
import { canonical, reference, TestCluster } from './cluster';
import type { LinearDefinition } from './cluster';

const DAY = 86_400_000;

// Both processing guarantees (docs/design.md §5): a producer per task, and one per replica; the
// latter also with several transactions per replica (REPLICA_TRANSACTIONS), each aborting alone.
const RUNS: Array<[string, ProcessingGuarantee, number]> = [
  ...PROCESSING_GUARANTEES.map((guarantee): [string, ProcessingGuarantee, number] => [
    guarantee,
    guarantee,
    DEFAULT_REPLICA_TRANSACTIONS,
  ]),
  ['exactly_once_v2, 4 transactions per replica', 'exactly_once_v2', 4],
];

describe.each(RUNS)('replicas changing while events flow, %s', (_name, guarantee, transactions) => {
  let cluster: TestCluster;
  const startReplica = (id: string, env: Record<string, string> = {}) =>
    cluster.startReplica(id, {
      PROCESSING_GUARANTEE: guarantee,
      REPLICA_TRANSACTIONS: String(transactions),
      ...env,
    });

  beforeEach(async () => {
    cluster = new TestCluster(6);
    await cluster.setup();
  });

  afterEach(async () => {
    await cluster.teardown();
  });

  async function streamAndCompare(
    during: (chunk: number) => Promise<void>,
    initialReplicas: number,
  ): Promise<void> {
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-00000000000b',
      output: cluster.output('daily_revenue'),
    }) as LinearDefinition;
    await cluster.putPipeline(definition);
    for (let i = 0; i < initialReplicas; i++) await startReplica(`r${i}`);
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 60_000, start, stepMs: (5 * DAY) / 60_000, seed: 7 });
    const chunks = 12;
    const size = orders.length / chunks;
    for (let chunk = 0; chunk < chunks; chunk++) {
      await cluster.produce(orders.slice(chunk * size, (chunk + 1) * size));
      await during(chunk);
      await sleep(300);
    }
    const ticks: EventEnvelope[] = await cluster.tickEveryPartition(start + 7 * DAY);
    const expected = reference(definition, [...orders, ...ticks]);
    expect(expected.late).toHaveLength(0);
    const results = await cluster.read(definition.output, expected.results.length, {
      timeoutMs: 120_000,
      settleMs: 3000,
    });
    expect(canonical(results)).toEqual(canonical(expected.results));
  }

  it('scales from 1 to 3 replicas mid-stream, no commit refused as from an ended generation', async () => {
    await streamAndCompare(async (chunk) => {
      if (chunk === 3) await startReplica('r1');
      if (chunk === 5) await startReplica('r2');
    }, 1);
    // Every task committed before its replica joined the next generation (kafkajs'
    // beforeRejoin) and named the new one once resumed: the group coordinator refused none of
    // the tasks' commits. (kafkajs' own lines, component "kafkajs", may name these errors when
    // its heartbeat hears of a rebalance: not a commit.)
    const refusals = cluster.startedReplicas
      .flatMap((replica) => replica.logs())
      .filter(
        (entry) =>
          entry['component'] !== 'kafkajs' &&
          /Specified group generation id is not valid|The coordinator is not aware of this member/.test(
            JSON.stringify(entry['err'] ?? ''),
          ),
      );
    expect(refusals).toEqual([]);
  });

  it('survives kill -9 of a replica mid-stream (and its restart)', async () => {
    let killing: Promise<void> | undefined;
    await streamAndCompare(async (chunk) => {
      if (chunk === 4) {
        const victim = await startReplica('victim');
        // Killed once it has work in hand (events keep flowing meanwhile), not before it joined.
        killing = (async () => {
          await until(
            async () =>
              /records_consumed_total\{kind="(source|repartition)"\} [1-9]/.test(
                await victim.metrics(),
              ),
            { what: 'the victim consuming' },
          );
          await sleep(300);
          victim.kill();
          expect(await victim.exited).toBeNull();
        })();
      }
      if (chunk === 9) {
        await killing;
        await startReplica('r-after');
      }
    }, 2);
  });

  it('redoes the work of tasks replaced before their first commit, with no record to come', async () => {
    // Long transactions, so that every record is consumed and nothing committed yet when every
    // source task's producer (or the replica's) is fenced (as a second owner would). No record arrives after that:
    // the partitions must be read again from their start, where kafkajs's position is past.
    const definition = dailyRevenueDefinition({
      id: '00000000-0000-4000-8000-00000000000f',
      output: cluster.output('daily_revenue'),
    }) as LinearDefinition;
    await cluster.putPipeline(definition);
    const replica = await startReplica('r0', { COMMIT_INTERVAL_MS: '8000' });
    const start = Date.UTC(2026, 10, 1);
    const orders = generateOrders({ count: 12_000, start, stepMs: (3 * DAY) / 12_000, seed: 8 });
    await cluster.produce(orders);
    const ticks = await cluster.tickEveryPartition(start + 5 * DAY);
    await until(
      async () => {
        const match = /records_consumed_total\{kind="source"\} (\d+)/.exec(await replica.metrics());
        return match !== null && Number(match[1]) >= orders.length + ticks.length;
      },
      { what: 'every record consumed' },
    );
    if (guarantee === 'exactly_once_v2') {
      for (let index = 0; index < transactions; index++)
        await cluster.fence(replicaTransactionalId(cluster.group, replica.id, index));
    } else {
      for (let partition = 0; partition < cluster.partitions; partition++)
        await cluster.fence(`${cluster.group}.${cluster.source}.${partition}`);
    }
    const expected = reference(definition, [...orders, ...ticks]);
    const results = await cluster.read(definition.output, expected.results.length, {
      timeoutMs: 60_000,
      settleMs: 3000,
    });
    expect(canonical(results)).toEqual(canonical(expected.results));
    const failed = replica
      .logs()
      .filter((entry) =>
        String(entry['msg']).startsWith(
          guarantee === 'exactly_once_v2'
            ? "the replica's transaction is aborted"
            : 'producing failed',
        ),
      );
    expect(failed.length).toBeGreaterThan(0);
  });
});
