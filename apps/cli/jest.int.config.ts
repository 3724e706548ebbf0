/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../../jest.preset.js');

// Against the real broker (npm run kafka:up); test/ runs the built app as real processes.
const config: Config = {
  ...preset,
  displayName: 'cli:int',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.int-spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testTimeout: 180_000,
};

export default config;
