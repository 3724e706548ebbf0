/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../jest.preset.js');

// The small chaos run: the built admin and processors against a broker of its own.
const config: Config = {
  ...preset,
  displayName: 'bench:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.int-spec.ts'],
  testTimeout: 600_000,
};

export default config;
