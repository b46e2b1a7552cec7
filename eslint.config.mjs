// The linter's rules for the project's TypeScript (npm run lint, part of npm test). Type-aware:
// what the compiler cannot say alone, chiefly promises nobody waits for or catches, and
// promises passed where a plain value or callback is expected.
import tseslint from 'typescript-eslint';

const rules = {
  '@typescript-eslint/no-floating-promises': 'error',
  '@typescript-eslint/no-misused-promises': 'error',
  '@typescript-eslint/await-thenable': 'error',
  '@typescript-eslint/no-explicit-any': 'error',
};

/** The server and its tests, and the web UI: each read with its own tsconfig. */
const typed = (files, project, extra = {}) => ({
  files,
  ...extra,
  languageOptions: { parser: tseslint.parser, parserOptions: { project, tsconfigRootDir: import.meta.dirname } },
  plugins: { '@typescript-eslint': tseslint.plugin },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench-results/**', 'test-output/**', '**/*.mjs', '**/*.cjs', '**/*.js'] },
  {
    ...typed(['src/**/*.ts', 'machines/**/*.ts', 'test/**/*.ts'], './tsconfig.json', { ignores: ['src/ui/**'] }),
    rules,
  },
  {
    ...typed(['src/ui/**/*.ts', 'src/ui/**/*.tsx'], './src/ui/tsconfig.json'),
    rules: {
      ...rules,
      // An event handler given to an element may be async: each catches and shows its own errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
    },
  },
);
