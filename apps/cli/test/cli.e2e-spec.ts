// The CLI as a user runs it (a real process) against a real admin, processor, broker and
// database: every example is applied, previewed, fed with its events, and its results read back
// with `tail` equal the expected output the README shows. The graph example's events are
// produced before it is applied: its sources start at their earliest record (a backfill).
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { uniqueName } from '@sluice/kafka/testing';
import { withoutEpoch } from '@sluice/testing';
import { parse, stringify } from 'yaml';

import { SluiceSystem } from './system';

const EXAMPLES = join(__dirname, '../../../examples');
const NAMES = ['daily-revenue', 'enriched-orders', 'fraud-router', 'sessionized-clicks'];
/** The graph example: its sources and sinks name topics of their own. */
const GRAPH = 'revenue-by-route';

const lines = (text: string) => text.split('\n').filter((line) => line.trim().length > 0);

/** The values `sluice tail -o json` printed, each without the state epoch it carries. */
const publishedValues = (stdout: string) =>
  lines(stdout).map((l) => {
    const { value, epoch } = withoutEpoch((JSON.parse(l) as { value: unknown }).value);
    expect(epoch).toEqual(expect.any(String));
    return value;
  });
const canonical = (values: unknown[]) => values.map((v) => JSON.stringify(sortKeys(v))).sort();
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, sortKeys(v)]),
  );
}

describe('sluice CLI against a running Sluice', () => {
  const system = new SluiceSystem();
  // The examples with outputs and the lookup table renamed, so runs never share a topic.
  const work = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  const scratch = mkdtempSync(join(tmpdir(), 'sluice-cli-scratch-'));
  const outputs = new Map<string, string>();
  const customersTopic = uniqueName('customers');
  /** The graph example's topics, renamed: by source id, and by sink id. */
  const graphSources = new Map<string, string>();
  const graphSinks = new Map<string, string>();

  beforeAll(async () => {
    cpSync(EXAMPLES, work, { recursive: true });
    for (const name of NAMES) {
      const path = join(work, name, 'pipeline.yaml');
      const output = uniqueName(name.replace(/-/g, '_'));
      outputs.set(name, output);
      writeFileSync(
        path,
        readFileSync(path, 'utf8')
          .replace(/^output: .*$/m, `output: ${output}\nprocessor_group: ${system.group}`)
          .replace('source: customers', `source: ${customersTopic}`),
      );
    }
    const graphPath = join(work, GRAPH, 'pipeline.yaml');
    const graph = parse(readFileSync(graphPath, 'utf8')) as {
      sources: Array<{ id: string; topic: string }>;
      sinks: Array<{ id: string; topic: string }>;
      processor_group?: string;
    };
    for (const source of graph.sources)
      graphSources.set(source.id, (source.topic = uniqueName(source.topic)));
    for (const sink of graph.sinks) graphSinks.set(sink.id, (sink.topic = uniqueName(sink.topic)));
    graph.processor_group = system.group;
    writeFileSync(graphPath, stringify(graph));
    await system.start();
    // The graph's events exist before it does: it reads them from their earliest record.
    for (const [source, topic] of graphSources) {
      const produced = await system.cli([
        'produce',
        '-f',
        join(work, GRAPH, `${source}.jsonl`),
        '-t',
        topic,
      ]);
      expect(produced.stdout).toMatch(/^produced \d+ records to /m);
    }
    // The lookup table is written before the pipeline that reads it, as a user would.
    const table = await system.cli([
      'produce',
      '-f',
      join(work, 'enriched-orders', 'customers.jsonl'),
      '-t',
      customersTopic,
      '-k',
      'customer_id',
      '--compact',
    ]);
    expect(table.stdout).toContain(`created topic ${customersTopic} (6 partitions, compacted)`);
    expect(table.stdout).toContain(`produced 5 records to ${customersTopic}`);
  }, 120_000);

  afterAll(async () => {
    await system.stop();
  });

  it('validates offline: every example is valid; a bad file exits 1 naming each JSON path', async () => {
    const ok = await system.cli(['validate', '-R', '-f', work]);
    expect(ok.code).toBe(0);
    expect(lines(ok.stdout)).toHaveLength(NAMES.length + 1);

    const bad = join(scratch, 'bad.yaml');
    writeFileSync(
      bad,
      'name: bad\noperators:\n  - {type: filter, field: x, op: almost, value: 1}\noutput: o\ncolour: red\n',
    );
    const run = await system.cli(['validate', '-f', bad], { SLUICE_URL: 'http://127.0.0.1:1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('colour: is not a known field');
    expect(run.stderr).toContain('operators[0].op');
    expect(run.stderr).not.toMatch(/\n\s+at /);

    // A folder: every file's problems, a file that does not parse among them, then exit 1;
    // apply changes nothing, not even the valid file's pipeline.
    const folder = mkdtempSync(join(scratch, 'folder-'));
    writeFileSync(join(folder, 'a-broken.yaml'), 'name: [unclosed\n');
    writeFileSync(join(folder, 'b-bad.yaml'), readFileSync(bad, 'utf8'));
    writeFileSync(
      join(folder, 'c-good.yaml'),
      `name: folder-good\noperators: []\noutput: ${uniqueName('folder_good')}\n`,
    );
    const checked = await system.cli(['validate', '-f', folder]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('3 problems in 2 of 3 files; nothing was changed');
    expect(checked.stderr).toMatch(/a-broken\.yaml: \$: is not valid YAML/);
    expect(checked.stderr).toContain('b-bad.yaml: colour: is not a known field');
    const applied = await system.cli(['apply', '-f', folder]);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('3 problems in 2 of 3 files; nothing was changed');
    const listed = JSON.parse((await system.cli(['get', '-o', 'json'])).stdout) as {
      name: string;
    }[];
    expect(listed.map((p) => p.name)).not.toContain('folder-good');
  });

  it('applies every example, then reports them unchanged, then configures an edited one', async () => {
    const first = await system.cli(['apply', '-R', '-f', work]);
    expect(first.stderr).toBe('');
    expect(lines(first.stdout).sort()).toEqual(
      [...NAMES, GRAPH]
        .sort()
        .map((n) =>
          expect.stringMatching(new RegExp(`^pipeline/${n} created \\(id .+, version 1\\)$`)),
        ),
    );
    const again = await system.cli(['apply', '-R', '-f', work]);
    expect(lines(again.stdout).sort()).toEqual(
      [...NAMES, GRAPH].sort().map((n) => `pipeline/${n} unchanged`),
    );

    const edited = join(scratch, 'edited.yaml');
    writeFileSync(
      edited,
      readFileSync(join(work, 'fraud-router', 'pipeline.yaml'), 'utf8').replace(
        /^description: .*$/m,
        'description: edited by the CLI test',
      ),
    );
    const update = await system.cli(['apply', '-f', edited]);
    expect(update.stdout.trim()).toBe(
      'pipeline/fraud-router configured (version 1 → 2, state kept)',
    );

    const list = await system.cli(['get', '-o', 'json']);
    const pipelines = JSON.parse(list.stdout) as { name: string; version: number }[];
    expect(pipelines.map((p) => [p.name, p.version]).sort()).toEqual([
      ['daily-revenue', 1],
      ['enriched-orders', 1],
      ['fraud-router', 2],
      ['revenue-by-route', 1],
      ['sessionized-clicks', 1],
    ]);
    const table = await system.cli(['get']);
    expect(lines(table.stdout)[0]).toMatch(/^NAME\s+ID\s+VERSION\s+ENABLED/);
    const one = await system.cli(['get', 'fraud-router', '-o', 'yaml']);
    expect(one.stdout).toContain('description: edited by the CLI test');

    // What `get -o yaml` printed, applied as it is.
    const got = join(scratch, 'got.yaml');
    writeFileSync(got, one.stdout);
    const back = await system.cli(['apply', '-f', got]);
    expect(back.code).toBe(0);
    expect(back.stdout.trim()).toBe('pipeline/fraud-router unchanged');
    // Edited but stale (someone changed it since): a 412, not a silent overwrite.
    writeFileSync(
      edited,
      readFileSync(edited, 'utf8').replace('edited by the CLI test', 'edited again'),
    );
    expect((await system.cli(['apply', '-f', edited])).stdout.trim()).toBe(
      'pipeline/fraud-router configured (version 2 → 3, state kept)',
    );
    writeFileSync(got, one.stdout.replace('edited by the CLI test', 'a stale edit'));
    const stale = await system.cli(['apply', '-f', got]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('was read at version 2, and is at version 3 now');
  });

  it.each(NAMES)('previews %s: the reference run gives the expected output', async (name) => {
    const dir = join(work, name);
    const args = [
      'preview',
      '-f',
      join(dir, 'pipeline.yaml'),
      '--events',
      join(dir, 'events.jsonl'),
    ];
    if (name === 'enriched-orders') {
      args.push('--lookup', `${customersTopic}=${join(dir, 'customers.jsonl')}:customer_id`);
    }
    const run = await system.cli([...args, '-o', 'json']);
    expect(run.stderr).toBe('');
    const answer = JSON.parse(run.stdout) as { results: unknown[] };
    expect(answer.results).toEqual(
      lines(readFileSync(join(dir, 'expected.jsonl'), 'utf8')).map((l) => JSON.parse(l)),
    );
  });

  it('produces every example’s events; the processor publishes exactly the expected results', async () => {
    for (const [index, name] of NAMES.entries()) {
      const run = await system.cli([
        'produce',
        '-f',
        join(work, name, 'events.jsonl'),
        '-t',
        system.sourceTopics[index]!,
      ]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^produced \d+ records to /m);
    }
    for (const name of NAMES) {
      const expected = lines(readFileSync(join(work, name, 'expected.jsonl'), 'utf8')).map((l) =>
        JSON.parse(l),
      );
      // Windows here close by idle_timeout_seconds (10 s of silence), hence the wait.
      const tail = await system.cli([
        'tail',
        outputs.get(name)!,
        '--from-beginning',
        '-o',
        'json',
        '--max',
        String(expected.length),
        '--idle-exit',
        '60',
      ]);
      const values = publishedValues(tail.stdout);
      expect({ name, results: canonical(values) }).toEqual({ name, results: canonical(expected) });
    }
    // The graph's sinks, each its own topic (its events were produced before it was applied).
    for (const [sink, topic] of graphSinks) {
      const expected = lines(
        readFileSync(join(work, GRAPH, 'expected', `${sink}.jsonl`), 'utf8'),
      ).map((l) => JSON.parse(l));
      const tail = await system.cli([
        'tail',
        topic,
        '--from-beginning',
        '-o',
        'json',
        '--max',
        String(expected.length),
        '--idle-exit',
        '60',
      ]);
      const values = publishedValues(tail.stdout);
      expect({ sink, results: canonical(values) }).toEqual({ sink, results: canonical(expected) });
    }
  }, 300_000);

  it('shows stats per pipeline and per processor, resets and deletes by name', async () => {
    const placed = lines(readFileSync(join(work, 'daily-revenue', 'events.jsonl'), 'utf8')).filter(
      (l) => l.includes('"order.placed"'),
    ).length;
    let stats: { events_processed: number; processors: unknown[] } = {
      events_processed: 0,
      processors: [],
    };
    for (let i = 0; i < 60 && stats.events_processed < placed; i += 1) {
      const run = await system.cli(['stats', 'daily-revenue', '-o', 'json']);
      stats = JSON.parse(run.stdout) as typeof stats;
      if (stats.events_processed < placed) await new Promise((r) => setTimeout(r, 500));
    }
    expect(stats.events_processed).toBe(placed);
    const table = await system.cli(['stats']);
    expect(lines(table.stdout)[0]).toMatch(/^NAME\s+PROCESSED\s+FILTERED/);
    expect(table.stdout).toContain('sessionized-clicks');
    const one = await system.cli(['stats', 'daily-revenue']);
    expect(one.stdout).toMatch(/cli-e2e-1\s+\d+/);

    expect((await system.cli(['reset', 'daily-revenue'])).stdout).toContain(
      'pipeline/daily-revenue reset',
    );
    expect((await system.cli(['delete', 'fraud-router'])).stdout.trim()).toBe(
      'pipeline/fraud-router deleted',
    );
    const left = JSON.parse((await system.cli(['get', '-o', 'json'])).stdout) as { name: string }[];
    expect(left.map((p) => p.name).sort()).toEqual([
      'daily-revenue',
      'enriched-orders',
      'revenue-by-route',
      'sessionized-clicks',
    ]);
    const gone = await system.cli(['get', 'fraud-router']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('no pipeline is named "fraud-router"');
  });

  it('replays the graph from its earliest records: its sink holds the results again, in a new epoch', async () => {
    const replay = await system.cli(['replay', GRAPH, '--from', 'earliest']);
    expect(replay.stderr).toBe('');
    const epoch = /in epoch (\S+):/.exec(replay.stdout)?.[1];
    expect(epoch).toEqual(expect.any(String));
    const expected = lines(
      readFileSync(join(work, GRAPH, 'expected', 'uk_daily.jsonl'), 'utf8'),
    ).map((l) => JSON.parse(l));
    const tail = await system.cli([
      'tail',
      graphSinks.get('uk_daily')!,
      '--from-beginning',
      '-o',
      'json',
      '--max',
      String(2 * expected.length),
      '--idle-exit',
      '60',
    ]);
    const published = lines(tail.stdout).map((l) =>
      withoutEpoch((JSON.parse(l) as { value: unknown }).value),
    );
    const again = published.filter((p) => p.epoch === epoch).map((p) => p.value);
    expect(canonical(again)).toEqual(canonical(expected));
    expect(published.filter((p) => p.epoch !== epoch)).toHaveLength(expected.length);
    const bad = await system.cli(['replay', GRAPH, '--from', 'last tuesday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('from');
  }, 120_000);

  it('fails in a friendly way: a wrong token, no admin, a missing file, a missing topic', async () => {
    const wrongToken = await system.cli(['get'], { SLUICE_ADMIN_TOKEN: 'not-the-token-at-all' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toContain('the admin refused the token (401)');
    const noAdmin = await system.cli(['get'], { SLUICE_URL: 'http://127.0.0.1:1' });
    expect(noAdmin.code).toBe(1);
    expect(noAdmin.stderr).toContain('cannot reach the admin at http://127.0.0.1:1');
    const noFile = await system.cli(['apply', '-f', join(work, 'nope.yaml')]);
    expect(noFile.stderr).toContain('nope.yaml: no such file or directory');
    const noTopic = await system.cli(['tail', uniqueName('absent')]);
    expect(noTopic.stderr).toMatch(/no topic "absent\..+"/);
    for (const run of [wrongToken, noAdmin, noFile, noTopic]) {
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(readdirSync(work)).toContain('daily-revenue');
  });
});
