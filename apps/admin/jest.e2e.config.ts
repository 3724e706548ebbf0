/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../../jest.preset.js');

// End-to-end: the real app over HTTP, a fresh PostgreSQL database per file, the real broker.
const config: Config = {
  ...preset,
  displayName: 'admin:e2e',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
  testTimeout: 120_000,
};

export default config;
