/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../jest.preset.js');

// These tests start their own brokers and databases; they run one at a time.
const config: Config = {
  ...preset,
  displayName: 'scripts:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.int-spec.ts'],
  testTimeout: 180_000,
};

export default config;
