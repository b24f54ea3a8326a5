// The linter: type-aware rules for what a mostly-async codebase gets wrong unseen (a promise
// nobody awaits, a promise where a callback's void was expected, awaiting a non-promise,
// returning a promise out of a try without awaiting it, throwing or rejecting with non-Errors),
// plus ESLint's own checks for bugs. Formatting is Prettier's job, not the linter's.
import './eslint.typescript5.js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'web/console/dist/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
      'no-async-promise-executor': 'error',
      'no-unsafe-finally': 'error',
      'no-fallthrough': 'error',
      'no-self-compare': 'error',
      'no-unreachable': 'error',
      'no-dupe-keys': 'error',
      'no-duplicate-case': 'error',
      'no-cond-assign': ['error', 'except-parens'],
      'no-constant-binary-expression': 'error',
    },
  },
);
