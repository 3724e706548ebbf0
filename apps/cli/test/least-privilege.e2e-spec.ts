// Sluice on a secured cluster with least-privilege users: the admin, the processor and the CLI
// each run as a SCRAM-SHA-512 user over SASL_SSL that holds exactly the ACLs the README lists
// for it (libs/kafka access/acl-grants.ts renders both), and the daily revenue example comes out
// as expected; a processor whose user lacks one of them stops with a line naming what is missing.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  adminAcls,
  cliAcls,
  createKafka,
  kafkaSecurityFromEnv,
  kafkajsAclEntries,
  processorAcls,
} from '@sluice/kafka';
import type { AclGrant, InstallationNames } from '@sluice/kafka';
import { OwnBroker, uniqueName } from '@sluice/kafka/testing';
import { logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';

import { until } from '@sluice/testing';

import { SluiceSystem } from './system';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const EXAMPLE = join(__dirname, '../../../examples/daily-revenue');
const lines = (text: string) => text.split('\n').filter((line) => line.trim().length > 0);
const canonical = (values: unknown[]) => values.map((v) => JSON.stringify(v)).sort();

describe('least-privilege users on a secured cluster', () => {
  const broker = new OwnBroker(19_660, { env: { SLUICE_KAFKA_SECURE: '1' } });
  const work = mkdtempSync(join(tmpdir(), 'sluice-acl-'));
  const output = uniqueName('daily_revenue_acl');
  let system: SluiceSystem;
  let operator: Admin;
  let names: InstallationNames;

  /** Grants `grants` to `User:<user>` as the operator (user `sluice`, who may alter ACLs). */
  const grant = (user: string, grants: AclGrant[]) =>
    operator.createAcls({ acl: kafkajsAclEntries(`User:${user}`, grants) });

  beforeAll(async () => {
    broker.up();
    system = new SluiceSystem({
      env: {
        admin: broker.secureEnv('admin'),
        processor: broker.secureEnv('processor'),
        cli: broker.secureEnv('cli'),
      },
    });
    const security = kafkaSecurityFromEnv(broker.secureEnv());
    if (!('security' in security)) throw new Error(security.problems.join('; '));
    operator = createKafka({
      clientId: 'acl-operator',
      brokers: [broker.secureEnv()['KAFKA_BROKERS']!],
      security: security.security,
      logLevel: logLevel.NOTHING,
    }).admin();
    await operator.connect();
    // The operator makes the source topics, as on a managed cluster; Sluice makes the rest.
    await operator.createTopics({
      topics: system.sourceTopics.map((topic) => ({ topic, numPartitions: 3 })),
      waitForLeaders: true,
    });
    names = {
      topicPrefix: system.prefix,
      consumerGroup: system.group,
      sourceTopics: system.sourceTopics,
      outputs: [output],
    };
    await grant('admin', adminAcls(names));
    await grant(
      'processor',
      processorAcls(names).filter((g) => !g.optional),
    );
    await grant(
      'cli',
      cliAcls({ topicPrefix: system.prefix, produces: system.sourceTopics, tails: [output] }),
    );

    cpSync(EXAMPLE, work, { recursive: true });
    const pipeline = join(work, 'pipeline.yaml');
    writeFileSync(
      pipeline,
      readFileSync(pipeline, 'utf8').replace(
        /^output: .*$/m,
        `output: ${output}\nprocessor_group: ${system.group}`,
      ),
    );
    await system.start();
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
    await operator?.disconnect();
    broker.destroy();
  });

  it('runs the daily revenue example with exactly the listed ACLs', async () => {
    const applied = await system.cli(['apply', '-f', join(work, 'pipeline.yaml')]);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toMatch(/^pipeline\/daily-revenue created/);
    const produced = await system.cli([
      'produce',
      '-f',
      join(work, 'events.jsonl'),
      '-t',
      system.sourceTopics[0]!,
    ]);
    expect(produced.stderr).toBe('');
    const expected = lines(readFileSync(join(work, 'expected.jsonl'), 'utf8')).map((l) =>
      JSON.parse(l),
    );
    const tail = await system.cli([
      'tail',
      output,
      '--from-beginning',
      '-o',
      'json',
      '--max',
      String(expected.length),
      '--idle-exit',
      '60',
    ]);
    expect(tail.stderr).toBe('');
    const values = lines(tail.stdout).map((l) => (JSON.parse(l) as { value: unknown }).value);
    expect(canonical(values)).toEqual(canonical(expected));

    // The processors' stats reach the admin (written by one user, read by another).
    const placed = lines(readFileSync(join(work, 'events.jsonl'), 'utf8')).filter((l) =>
      l.includes('"order.placed"'),
    ).length;
    await until(
      async () => {
        const run = await system.cli(['stats', 'daily-revenue', '-o', 'json']);
        return (JSON.parse(run.stdout) as { events_processed: number }).events_processed === placed;
      },
      { what: 'the stats of every placed order', timeoutMs: 30_000 },
    );
    // Nothing along the way was refused and retried.
    expect(system.allLogs()).not.toMatch(/AUTHORIZATION_FAILED/);
  }, 180_000);

  it('names the missing grant: a processor without its transactional ids, a tail without its group', async () => {
    // User `limited` stands for a processor group's user that was granted all but one ACL.
    const group = `${system.group}-b`;
    await grant(
      'limited',
      processorAcls({ ...names, consumerGroup: group }).filter(
        (g) => !g.optional && g.resource.kind !== 'transactional-id',
      ),
    );
    const replica = await system.startProcessor('limited-1', {
      ...broker.secureEnv('limited'),
      CONSUMER_GROUP: group,
    });
    await until(async () => replica.output().includes('TRANSACTIONAL_ID_AUTHORIZATION_FAILED'), {
      what: 'the replica reporting the missing grant',
      timeoutMs: 60_000,
    });
    expect(replica.output()).toMatch(
      new RegExp(`needs Write on transactional id ${escape(group)}\\.\\S+\\.\\d+`),
    );

    // It may read a source topic (a processor's grant), but not join a group of the CLI's.
    const source = system.sourceTopics[0]!;
    const tail = await system.cli(['tail', source, '--from-beginning', '--idle-exit', '30'], {
      ...broker.secureEnv('limited'),
    });
    expect(tail.code).toBe(1);
    expect(tail.stderr).toContain('GROUP_AUTHORIZATION_FAILED');
    expect(tail.stderr).toContain(`needs Read on group ${system.prefix}.cli.tail.`);
    expect(tail.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);
});
