// README's "Kafka ACLs" shows what `sluice acls` prints for the default names; these are the
// grants the secured-system e2e gives each app, so the README lists the tested ACLs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { buildProgram } from '../program';

const README = readFileSync(join(__dirname, '../../../../README.md'), 'utf8');

/** README's commands in the section, each with the lines printed under it. */
function documented(): Array<{ args: string[]; printed: string[] }> {
  const section = README.slice(README.indexOf('### Kafka ACLs'));
  const start = section.indexOf('```sh\n') + 6;
  const block = section.slice(start, section.indexOf('\n```', start));
  return block
    .split(/^# npx sluice /m)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const [command, ...printed] = chunk.trim().split('\n');
      return { args: command!.split(' '), printed };
    });
}

async function printed(args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const saved = { ...process.env };
  for (const name of ['SLUICE_TOPIC_PREFIX', 'CONSUMER_GROUP', 'SOURCE_TOPICS'])
    delete process.env[name];
  try {
    await buildProgram({ line: (text = '') => lines.push(text) }).parseAsync(args, {
      from: 'user',
    });
  } finally {
    Object.assign(process.env, saved);
  }
  return lines;
}

describe('sluice acls', () => {
  it("is what README's Kafka ACLs section shows, for each app", async () => {
    const commands = documented();
    expect(commands.map((c) => c.args.slice(0, 2).join(' '))).toEqual([
      'acls processor',
      'acls admin',
      'acls cli',
      'acls topics-job',
    ]);
    for (const { args, printed: shown } of commands) expect(await printed(args)).toEqual(shown);
  });

  it('comments out the optional grant and says why above each command', async () => {
    const lines = await printed(['acls', 'processor', '--principal', 'User:p']);
    expect(lines.filter((l) => l.startsWith('kafka-acls.sh'))).not.toContainEqual(
      expect.stringContaining('ClusterAction'),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^# kafka-acls\.sh .*ClusterAction --cluster$/),
    );
    for (const [index, line] of lines.entries())
      if (line.startsWith('kafka-acls.sh')) expect(lines[index - 1]).toMatch(/^# /);
  });

  it('names its own inputs: the installation names from the environment, outputs and tables', async () => {
    process.env['CONSUMER_GROUP'] = 'bars';
    const saved = process.env['SOURCE_TOPICS'];
    const lines: string[] = [];
    try {
      process.env['SOURCE_TOPICS'] = 'ticks, trades';
      process.env['SLUICE_TOPIC_PREFIX'] = 'market';
      await buildProgram({ line: (text = '') => lines.push(text) }).parseAsync(
        ['acls', 'processor', '--principal', 'User:bars', '--table', 'symbols', '--output', 'ohlc'],
        { from: 'user' },
      );
    } finally {
      delete process.env['CONSUMER_GROUP'];
      delete process.env['SLUICE_TOPIC_PREFIX'];
      if (saved === undefined) delete process.env['SOURCE_TOPICS'];
      else process.env['SOURCE_TOPICS'] = saved;
    }
    const text = lines.join('\n');
    for (const expected of [
      '--topic ticks',
      '--topic trades',
      '--topic market. --resource-pattern-type prefixed',
      '--topic ohlc.late',
      '--operation Create --topic symbols',
      '--group bars\n',
      '--transactional-id bars. --resource-pattern-type prefixed',
    ])
      expect(text + '\n').toContain(expected);
  });

  it('refuses an unknown app and a principal that is not one', async () => {
    await expect(printed(['acls', 'streams', '--principal', 'User:x'])).rejects.toThrow(
      'acls is for one of processor, admin, cli, topics-job, not "streams"',
    );
    await expect(printed(['acls', 'admin', '--principal', 'admin'])).rejects.toThrow(
      '--principal must be a Kafka principal such as User:admin',
    );
  });
});
