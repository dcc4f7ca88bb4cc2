// One lint configuration for the whole repository, run by `npm test` (npm run lint).
// Beyond the recommended rules it holds the architecture in place: no import cycle,
// imports inside shared/ flow down its layers (docs/architecture.md), and no function
// reaches 80 lines outside the tests.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** shared/'s layers, lowest first: a module may import its own layer or a lower one. */
const CORE = [
  'metrics.ts',
  'fio-point.ts',
  'model.ts',
  'printable.ts',
  'labels.ts',
  'selectors.ts',
  'config.ts',
  'module-paths.ts',
  'node-support-notice.ts',
  'upload-status.ts',
  'comparison',
];

/** What the store may know of the core: the model it stores, not selectors, statistics or answers. */
const STORE_READS = ['model.ts', 'metrics.ts', 'labels.ts', 'printable.ts', 'config.ts', 'upload-status.ts'];

/** A zone: files under `target` may import from shared/ only what `allowed` lists. */
function layer(target, allowed, message) {
  return { target, from: './shared', except: allowed.map((p) => `./${p}`), message };
}

const coreFiles = CORE.map((p) => `./shared/${p}`);
const ABOVE_SHARED = ['./functions', './infra', './cli', './report', './bench', './harness', './test'];

const zones = [
  { target: './shared', from: ABOVE_SHARED, message: 'shared/ is the domain: it imports nothing above it.' },
  ...coreFiles.map((target) => layer(target, CORE, 'the core imports only the core.')),
  layer('./shared/parsers', [...CORE, 'parsers'], 'parsers import only the core.'),
  layer(
    './shared/store',
    [...STORE_READS, 'store'],
    'the store imports only the domain model: it speaks in its own items.',
  ),
  layer('./shared/api.ts', [...CORE, 'store', 'api.ts'], 'the HTTP contract sits below the use cases.'),
  { target: './harness', from: './test', message: 'harness/ serves tests and benches: it imports no test file.' },
  { target: './bench', from: './test', message: 'benches import harness/, never a test file.' },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'cdk.out/**',
      'coverage/**',
      'node_modules/**',
      '.benchdrop/**',
      'bench/out/**',
      'test/fixtures/**',
      'examples/**',
      'demo/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones }],
      'import-x/no-self-import': 'error',
      'import-x/no-useless-path-segments': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'max-lines-per-function': ['error', { max: 79, skipBlankLines: false, skipComments: false, IIFEs: true }],
      'max-len': ['error', { code: 120, ignoreUrls: true }],
    },
  },
  {
    // Test suites are long describe blocks by nature, and synthesised templates are untyped JSON:
    // the length limit and the ban on `any` are for the product and its tools.
    files: ['test/**'],
    rules: { 'max-lines-per-function': 'off', 'max-len': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain JavaScript entry points run on Node; TypeScript checks the rest.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
