// The linter's rules for the project's TypeScript (npm run lint, part of npm test). Type-aware:
// what the compiler cannot say alone, chiefly promises nobody waits for or catches, and
// promises passed where a plain value or callback is expected.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench-results/**', 'test-output/**', '**/*.mjs', '**/*.cjs', '**/*.js'] },
  {
    files: ['src/**/*.ts', 'machines/**/*.ts', 'test/**/*.ts'],
    ignores: ['src/ui/**'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['src/ui/**/*.ts', 'src/ui/**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './src/ui/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // An event handler given to an element may be async: each catches and shows its own errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
