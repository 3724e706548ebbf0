// One flat config for the workspace. Module boundaries are errors: the tags in each
// project.json are the architecture, and a tag without a rule enforces nothing.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const ioPackages = [
  'kafkajs',
  'pg',
  'typeorm',
  '@nestjs/*',
  'fastify',
  'node:fs',
  'fs',
  'node:net',
  'net',
  'node:http',
  'http',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules',
      '**/dist',
      '**/coverage',
      '.nx',
      '.local',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          depConstraints: [
            {
              sourceTag: 'type:app',
              onlyDependOnLibsWithTags: [
                'type:domain',
                'type:infra',
                'type:contracts',
                'type:testing',
              ],
            },
            {
              sourceTag: 'type:domain',
              onlyDependOnLibsWithTags: ['type:contracts'],
              bannedExternalImports: ioPackages,
            },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:contracts'] },
            {
              sourceTag: 'type:contracts',
              onlyDependOnLibsWithTags: [],
              bannedExternalImports: ioPackages,
            },
            {
              sourceTag: 'type:testing',
              onlyDependOnLibsWithTags: ['type:domain', 'type:infra', 'type:contracts'],
            },
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:admin', onlyDependOnLibsWithTags: ['scope:admin', 'scope:shared'] },
            {
              sourceTag: 'scope:processor',
              onlyDependOnLibsWithTags: ['scope:processor', 'scope:shared'],
            },
            { sourceTag: 'scope:tools', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:shared'] },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // NestJS injects by the constructor parameter types that decorator metadata records: those
    // imports are values at run time, and the type-imports rule must know it.
    files: ['apps/**/*.ts'],
    languageOptions: {
      parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true },
    },
  },
  {
    // Tool configuration, not product code: it loads the shared CommonJS preset by path.
    files: ['**/jest*.config.ts'],
    rules: {
      '@nx/enforce-module-boundaries': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  prettier,
);
