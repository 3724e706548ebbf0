/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../../jest.preset.js');

// Tests against the real broker started by `npm run processor:up`.
const config: Config = {
  ...preset,
  displayName: 'processor:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 60_000,
};

export default config;
