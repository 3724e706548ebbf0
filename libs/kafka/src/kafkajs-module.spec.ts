import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

describe('the kafkajs module replacements', () => {
  // Jest runs modules through a registry of its own, so this is checked where it matters: a
  // plain Node process, as the apps run, that imports @sluice/kafka and then kafkajs.
  it('are the modules kafkajs loads once @sluice/kafka is imported first', () => {
    const script = `
      require('@sluice/kafka');
      require('kafkajs');
      const load = require('node:module').createRequire(require.resolve('kafkajs'));
      const loaded = (path) => load.cache[load.resolve('kafkajs/src/' + path)].exports;
      const { decodeRecord } = require('./libs/kafka/src/fast-record-decoder.ts');
      const { filterAbortedMessages } = require('./libs/kafka/src/read-committed-fix.ts');
      process.stdout.write(JSON.stringify([
        loaded('protocol/recordBatch/record/v0/decoder') === decodeRecord,
        loaded('consumer/filterAbortedMessages') === filterAbortedMessages,
      ]));
    `;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.base.json') },
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual([true, true]);
  });
});
