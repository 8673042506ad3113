// One lint configuration for the whole workspace: typescript-eslint's strict,
// type-checked rules, with Prettier owning layout (no stylistic rules here).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // scripts/consumers holds programs that run in throwaway projects outside the workspace.
  { ignores: ['**/dist/**', '**/node_modules/**', 'bench/results/**', '**/*.d.mts', 'scripts/consumers/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Numbers and booleans read fine in messages; objects and undefined do not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `(x) => void f(x)`-style shorthands are idiomatic for listeners.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Sluice serves 2025-11-25 clients as well as 2026-07-28 ones, and imports
      // legacy HTTP+SSE upstreams: the SDK marks exactly those APIs deprecated.
      '@typescript-eslint/no-deprecated': [
        'error',
        {
          allow: [
            {
              from: 'package',
              package: '@modelcontextprotocol/server',
              name: ['Server', 'elicitInput', 'requestSampling', 'log'],
            },
            { from: 'package', package: '@modelcontextprotocol/client', name: ['SSEClientTransport'] },
          ],
        },
      ],
    },
  },
  {
    // Tests state what they expect: a non-null assertion there is an assertion.
    files: ['**/test/**', 'test/**', 'bench/**', 'docs/test/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
);
