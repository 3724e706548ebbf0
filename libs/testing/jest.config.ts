/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../../jest.preset.js');

const config: Config = {
  ...preset,
  displayName: 'testing',
  rootDir: __dirname,
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};

export default config;
