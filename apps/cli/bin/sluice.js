#!/usr/bin/env node
// `npx sluice`: runs the built CLI, building it (and the libraries it uses) on first use.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { execFileSync } = require('node:child_process');

const main = join(__dirname, '..', 'dist', 'main.js');
if (!existsSync(main)) {
  process.stderr.write('sluice: first run, building the CLI (once)…\n');
  const root = join(__dirname, '..', '..', '..');
  execFileSync('npx', ['nx', 'run', 'cli:build', '--outputStyle=stream-without-prefixes'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false' },
  });
}
require(main);
