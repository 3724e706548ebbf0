/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const preset = require('../jest.preset.js');

const config: Config = {
  ...preset,
  displayName: 'bench',
  rootDir: __dirname,
  testMatch: ['<rootDir>/**/*.spec.ts'],
};

export default config;
