import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // bench/peer-langgraph has its own packages, installed only when the bench runs: its types are checked with its
  // own tsconfig (`npx tsc -p bench/peer-langgraph`), not here.
  { ignores: ['node_modules/', 'data/', 'bench/out/', 'bench/peer-langgraph/'] },
  js.configs.recommended,
  // Type-checked rules, read with the types from tsconfig.json. They apply to the TypeScript files; the .js and
  // .mjs files are in no tsconfig project, so they get the same rules less the type-checked ones (below).
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Off: the ports (LlmClient, ToolRunner, Notifier, InboundHandler, ...) are async interfaces, and their
      // implementations and test fakes that happen to need no await stay `async` on purpose, so that a throw
      // reaches the caller as a rejected promise, as it would from a real implementation.
      '@typescript-eslint/require-await': 'off',
      // Off: the project declares no enums. The only ones it uses are the MCP SDK's ErrorCode members, compared
      // with McpError.code, which the SDK types as a plain number because it comes over the wire.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', console: 'readonly' },
    },
  },
);
