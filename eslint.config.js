// ESLint flat config (eslint 9): @eslint/js and typescript-eslint recommended rules, plus the house
// rules of issue 15 that a linter can check. The import rules between stages are dependency-cruiser's
// (.dependency-cruiser.cjs); `npm run lint` runs both.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `process.env` is read in src/config/ only (readEnvironment); every other module gets values as parameters. */
const PROCESS_ENV_MESSAGE = 'read the environment through readEnvironment() in src/config/environment.ts and pass values down';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // A disable comment that suppresses nothing is an error: each one left names a rule that fires.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // `_name` marks a parameter kept for its position (a callback's signature).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Our code, migrations included: no process.env outside src/config/. The simulator
    // (src/simulator/) would be the one exception, and only because it also runs as a program of
    // its own (src/simulator/cli.ts); it reads no environment today, so the rule covers it too.
    files: ['src/**/*.ts', 'migrations/**/*.ts'],
    ignores: ['src/config/**'],
    rules: {
      // Also catches `const { env } = process` and `process['env']`.
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: PROCESS_ENV_MESSAGE }],
      // `process[name]` with a computed name could still reach it.
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][computed=true]", message: PROCESS_ENV_MESSAGE }],
    },
  },
  {
    // The CLI's one setup point: commands get the environment and their settings from
    // src/cli/setup.ts (config/command-settings.ts holds the rule), never by reading it themselves.
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/setup.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: 'config/environment(\\.js)?$', message: 'take the environment and settings from src/cli/setup.ts (the one setup point)' }] }],
    },
  },
  {
    // The bin and the bundler script: plain JavaScript that Node runs as it is (no TypeScript to
    // check them), so they need Node's globals declared.
    files: ['bin/**/*.js', 'scripts/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // Small modules: none over 400 lines, blank lines and comments counted (what a reader scrolls).
    files: ['src/**/*.ts', 'migrations/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
);
