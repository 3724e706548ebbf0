/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../../jest.preset.js');

// Reproductions of known, unfixed issues: run by hand (npm run test:known-issues), not by CI,
// and listed in the README's known issues until they pass.
const config: Config = {
  ...preset,
  displayName: 'processor:known-issues',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.known-issue-spec.ts'],
  testTimeout: 300_000,
};

export default config;
