// The whole of Sluice on a secured cluster (`SLUICE_KAFKA_SECURE=1 npm run kafka:up`'s broker):
// the admin, the processor and the CLI run the daily revenue example (apply, produce, tail,
// stats) and it comes out as expected —
// - over SASL_SSL with SCRAM-SHA-512, each app as a user that holds exactly the ACLs the README
//   lists for it (libs/kafka access/acl-grants.ts renders both), and nothing more, the admin's
//   database on a PostgreSQL that takes TLS only (sslmode=verify-full, DATABASE_CA_FILE); a
//   processor and a tail whose user lacks one grant say which one; a replica, an admin and the
//   CLI given a wrong password, or a CA that did not sign the broker's certificate, stop within
//   10 s, saying so, instead of retrying; settings that cannot work are all listed at boot;
// - over mTLS, each app known by its client certificate alone.
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
import { freePort, TlsPostgres, until, withoutEpoch } from '@sluice/testing';
import { logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';

import { SluiceSystem } from './system';

const EXAMPLE = join(__dirname, '../../../examples/daily-revenue');
const lines = (text: string) => text.split('\n').filter((line) => line.trim().length > 0);

/** The values `sluice tail -o json` printed, each without the state epoch it carries. */
const publishedValues = (stdout: string) =>
  lines(stdout).map((l) => {
    const { value, epoch } = withoutEpoch((JSON.parse(l) as { value: unknown }).value);
    expect(epoch).toEqual(expect.any(String));
    return value;
  });
const canonical = (values: unknown[]) => values.map((v) => JSON.stringify(v)).sort();
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const WRONG_PASSWORD = { KAFKA_SASL_PASSWORD_FILE: '', KAFKA_SASL_PASSWORD: 'not-the-password' };

const broker = new OwnBroker(19_660, { env: { SLUICE_KAFKA_SECURE: '1' } });
let postgres: TlsPostgres;

beforeAll(async () => {
  postgres = new TlsPostgres(await freePort());
  postgres.start();
  await broker.up();
}, 120_000);
afterAll(async () => {
  await broker.destroy();
  postgres?.stop();
});

/** The PostgreSQL of this file, which refuses connections without TLS. */
const tlsPostgres = () => ({ url: postgres.url(), caFile: postgres.caFile });

/** The example's files, its output renamed and the pipeline bound to `system`'s group. */
function example(system: SluiceSystem, output: string): string {
  const work = mkdtempSync(join(tmpdir(), 'sluice-secured-'));
  cpSync(EXAMPLE, work, { recursive: true });
  const pipeline = join(work, 'pipeline.yaml');
  writeFileSync(
    pipeline,
    readFileSync(pipeline, 'utf8').replace(
      /^output: .*$/m,
      `output: ${output}\nprocessor_group: ${system.group}`,
    ),
  );
  return work;
}

/** Applies, produces and tails the example as a user would; checks its results and stats. */
async function runsDailyRevenue(system: SluiceSystem, work: string, output: string) {
  const applied = await system.cli(['apply', '-f', join(work, 'pipeline.yaml')]);
  expect(applied.stderr).toBe('');
  expect(applied.stdout).toMatch(/^pipeline\/daily-revenue created/);
  // A new pipeline reads what its source partitions hold after a replica runs it (until
  // pipelines own their positions, issue 16): events produced before would be missed. A CI run
  // that produced at once got exactly one source partition's windows.
  await until(
    async () => {
      const run = await system.cli(['stats', 'daily-revenue', '-o', 'json']);
      return run.code === 0 && (JSON.parse(run.stdout) as { state?: string }).state === 'running';
    },
    { what: 'the processor running the pipeline', timeoutMs: 60_000 },
  );
  const events = join(work, 'events.jsonl');
  const produced = await system.cli(['produce', '-f', events, '-t', system.sourceTopics[0]!]);
  expect(produced.stderr).toBe('');
  const expected = lines(readFileSync(join(work, 'expected.jsonl'), 'utf8')).map((l) =>
    JSON.parse(l),
  );
  // Its windows close by idle_timeout_seconds (10 s of silence), hence the wait.
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
  const values = publishedValues(tail.stdout);
  expect(canonical(values)).toEqual(canonical(expected));

  // The processor's stats reach the admin.
  const placed = lines(readFileSync(events, 'utf8')).filter((l) =>
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
}

describe('over SASL_SSL, each app as a least-privilege user', () => {
  const output = uniqueName('daily_revenue_acl');
  let system: SluiceSystem;
  let operator: Admin;
  let names: InstallationNames;
  let work: string;

  /** Grants `grants` to `User:<user>` as the operator (user `sluice`, who may alter ACLs). */
  const grant = (user: string, grants: AclGrant[]) =>
    operator.createAcls({ acl: kafkajsAclEntries(`User:${user}`, grants) });

  beforeAll(async () => {
    system = new SluiceSystem({
      env: {
        admin: broker.secureEnv('admin'),
        processor: broker.secureEnv('processor'),
        cli: broker.secureEnv('cli'),
      },
      tlsPostgres: tlsPostgres(),
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
    work = example(system, output);
    await system.start();
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
    await operator?.disconnect();
  });

  it('runs the daily revenue example with exactly the listed ACLs', async () => {
    await runsDailyRevenue(system, work, output);
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
      // A task's (<group>.<topic>.<partition>) or, under exactly_once_v2, the replica's.
      new RegExp(
        `needs Write on transactional id ${escape(group)}\\.(\\S+\\.\\d+|replica/limited-1/\\d+)`,
      ),
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
    replica.kill();

    // A processor group's user without the group itself: the join is refused, named and
    // retried with back-off (not in a loop), and the replica stays up for the grant.
    const ungrouped = `${system.group}-c`;
    await grant(
      'limited',
      processorAcls({ ...names, consumerGroup: ungrouped }).filter(
        (g) => !g.optional && !(g.resource.kind === 'group' && g.resource.name === ungrouped),
      ),
    );
    const joiner = await system.startProcessor('limited-2', {
      ...broker.secureEnv('limited'),
      CONSUMER_GROUP: ungrouped,
    });
    await until(() => joiner.output().includes(`needs Read on group ${ungrouped} `), {
      what: 'the replica naming its missing group grant',
      timeoutMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const refusals = joiner
      .output()
      .split('\n')
      .filter((line) => line.includes(`needs Read on group ${ungrouped} `)).length;
    expect(refusals).toBeLessThan(10);
    expect(await Promise.race([joiner.exited, Promise.resolve('running')])).toBe('running');
    joiner.kill();
  }, 120_000);

  it('stops a replica given a wrong password within 10 s, exit 1, with a line naming the authentication', async () => {
    const started = Date.now();
    const replica = await system.startProcessor('wrong-password', WRONG_PASSWORD);
    const code = await replica.exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(code).toBe(1);
    expect(replica.output()).toMatch(/authentication failed/i);
    expect(replica.output()).not.toContain('not-the-password');
  });

  it('stops an admin given a wrong password within 10 s, exit 77, saying why', async () => {
    // A database of its own (made before the clock starts): nothing of the running admin's to
    // wait for.
    const database = system.newDatabase();
    const started = Date.now();
    const admin = system.startAdmin({ ...WRONG_PASSWORD, DATABASE_URL: database });
    const code = await admin.exited;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(code).toBe(77);
    expect(admin.output()).toMatch(
      /refused the admin's credentials or certificate.*authentication failed/is,
    );
    expect(admin.output()).not.toContain('not-the-password');
  });

  it('stops the CLI given a wrong password within 10 s, non-zero, with a line naming the authentication', async () => {
    const events = join(work, 'events.jsonl');
    const started = Date.now();
    const run = await system.cli(
      ['produce', '-f', events, '-t', system.sourceTopics[1]!],
      WRONG_PASSWORD,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/authentication failed/i);
    expect(run.stderr).not.toContain('not-the-password');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("stops each app that trusts a CA other than the broker certificate's within 10 s, naming the certificate", async () => {
    const untrusted = { KAFKA_SSL_CA_FILE: postgres.otherCaFile };
    const certificateLine = /certificate/i;

    let started = Date.now();
    const replica = await system.startProcessor('untrusted-ca', untrusted);
    expect(await replica.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(replica.output()).toMatch(certificateLine);

    const database = system.newDatabase();
    started = Date.now();
    const admin = system.startAdmin({ ...untrusted, DATABASE_URL: database });
    expect(await admin.exited).toBe(77);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(admin.output()).toMatch(certificateLine);

    started = Date.now();
    const run = await system.cli(['tail', system.sourceTopics[1]!, '--idle-exit', '30'], untrusted);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(certificateLine);
  });

  it('lists every problem of settings that cannot work, in each app, before it connects', async () => {
    const unusable = {
      KAFKA_SASL_MECHANISM: 'kerberos',
      KAFKA_SSL_CA_FILE: join(postgres.directory, 'no-such-ca.pem'),
    };
    const named = [/KAFKA_SASL_MECHANISM/, /KAFKA_SSL_CA_FILE .*no-such-ca\.pem/];
    const replica = await system.startProcessor('unusable', unusable);
    expect(await replica.exited).not.toBe(0);
    const database = system.newDatabase();
    const admin = system.startAdmin({ ...unusable, DATABASE_URL: database });
    expect(await admin.exited).not.toBe(0);
    const run = await system.cli(['tail', system.sourceTopics[1]!, '--idle-exit', '30'], unusable);
    expect(run.code).not.toBe(0);
    for (const output of [replica.output(), admin.output(), run.stderr])
      for (const problem of named) expect(output).toMatch(problem);
  });
});

describe('over mTLS, each app known by its client certificate', () => {
  const output = uniqueName('daily_revenue_mtls');
  let system: SluiceSystem;
  let work: string;

  beforeAll(async () => {
    const sasl = broker.secureEnv();
    const secure = join(broker.directory, 'secure');
    // The SSL listener two ports above SASL_SSL requires a client certificate; no SASL at all.
    const mtls = {
      KAFKA_BROKERS: sasl['KAFKA_BROKERS']!.replace(/\d+$/, (port) => String(Number(port) + 2)),
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: sasl['KAFKA_SSL_CA_FILE']!,
      KAFKA_SSL_CERT_FILE: join(secure, 'client-mtls.pem'),
      KAFKA_SSL_KEY_FILE: join(secure, 'client-mtls.key'),
      KAFKA_SASL_MECHANISM: '',
      KAFKA_SASL_USERNAME: '',
      KAFKA_SASL_PASSWORD_FILE: '',
    };
    system = new SluiceSystem({
      env: { admin: mtls, processor: mtls, cli: mtls },
      tlsPostgres: tlsPostgres(),
    });
    work = example(system, output);
    await system.start();
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('runs the daily revenue example', async () => {
    await runsDailyRevenue(system, work, output);
  }, 180_000);
});
