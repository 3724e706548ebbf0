// Shared Jest settings. SWC strips types without type-checking (the `typecheck` target does
// that), which keeps the suite fast on two cores; decorator metadata is kept for NestJS.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [
    `^${alias.replace('/', '\\/')}$`,
    path.join(__dirname, target),
  ]),
);

// Dependencies published as ES modules only: Jest's module loader on Node 20 cannot require
// them, so SWC compiles them to CommonJS like our own sources.
const esmOnlyDependencies = ['content-disposition'];

module.exports = {
  testEnvironment: 'node',
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnlyDependencies.join('|')})/)`],
  transform: {
    '^.+\\.(ts|js|mjs)$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  reporters: ['default', path.join(__dirname, 'jest.failure-summary.js')],
};
