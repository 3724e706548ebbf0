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

// kafkajs modules Sluice replaces in Node's require cache (libs/kafka/src/kafkajs-module.ts).
// Jest loads modules through a registry of its own, so tests that read topics in-process would
// get kafkajs' originals; these map the requests kafkajs makes for them to the replacements.
const kafkajsReplacements = {
  '^\\./filterAbortedMessages$': 'filter-aborted-messages.js',
  '^\\.\\./record/v0/decoder$': 'record-decoder.js',
};
for (const [request, file] of Object.entries(kafkajsReplacements)) {
  moduleNameMapper[request] = path.join(__dirname, 'libs/kafka/src/testing/jest', file);
}

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
};
