'use strict';
// ESLint's recommended rules over the JavaScript of lib/, test/, bench/, examples/ and scripts/;
// layout is Prettier's (eslint-config-prettier turns off the rules it owns).
const js = require('@eslint/js');
const globals = require('globals');
const prettier = require('eslint-config-prettier');

module.exports = [
  { ignores: ['build/', 'docs/api/', 'node_modules/', '.gpu/'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', ecmaVersion: 2024, globals: { ...globals.node } },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', ecmaVersion: 2024, globals: { ...globals.node } },
  },
  {
    files: ['test/**/*.js'],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    rules: {
      strict: ['error', 'global'],
      'prefer-const': 'error',
      'no-var': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Tests drop references (x = null) so that the collector may take what they held.
      'no-useless-assignment': 'off',
    },
  },
  prettier,
];
