/**
 * Import rules between the stages of src/ (issue 15), checked by `npm run lint` (depcruise).
 *
 * Each stage imports only the stages below it, and itself:
 *   config, log → source → transform → store → sync → reconcile, export, verify → report → schedule → cli
 * Stages on one level may import each other (export reads reconcile's issue codes), cycles aside.
 * One exception: transform imports the row types of store/schema.ts (type-only), which it produces.
 * (migrations/ sits with store: store/migrate.ts runs them; they import nothing from src/). The
 * simulator (src/simulator/) is a stand-in for the service: it imports none of the stages, and only
 * the CLI (`callsync demo`/`simulate`) imports it among them (tests and bench/ do too). No cycles.
 */
const LAYERS = [
  ['config', 'log'],
  ['source'],
  ['transform'],
  ['store'],
  ['sync'],
  ['reconcile', 'export', 'verify'],
  ['report'],
  ['schedule'],
  ['cli'],
];

const folder = (names) => `^src/(${names.join('|')})/`;

/** For each stage: forbidden to import any stage above it. */
const upward = LAYERS.slice(0, -1).map((stages, i) => ({
  name: `layer-${stages.join('-')}`,
  comment: `${stages.join(', ')} may import only ${LAYERS.slice(0, i + 1).flat().join(', ')} (the stages below, and itself)`,
  severity: 'error',
  from: { path: folder(stages) },
  // transform may import the row types of store/schema.ts (type-only: the rule below).
  to: { path: folder(LAYERS.slice(i + 1).flat()), ...(stages.includes('transform') ? { pathNot: '^src/store/schema\\.ts$' } : {}) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'transform-to-store-types-only',
      comment: 'transform produces the rows store/schema.ts declares (issue 15, item 2): it may import their types, nothing that runs',
      severity: 'error',
      from: { path: '^src/transform/' },
      to: { path: '^src/store/schema\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'migrations-frozen',
      comment: 'a migration is frozen in time: it imports nothing from src/ (only kysely and its dialect helper)',
      severity: 'error',
      from: { path: '^migrations/' },
      to: { path: '^src/' },
    },
    {
      name: 'simulator-standalone',
      comment: 'the simulator stands in for the service: it imports none of the stages',
      severity: 'error',
      from: { path: '^src/simulator/' },
      to: { path: '^(src/(?!simulator/)|migrations/)' },
    },
    {
      name: 'simulator-only-from-cli',
      comment: 'among the stages only the CLI starts the simulator (demo, simulate); tests and bench/ may too',
      severity: 'error',
      from: { path: '^(src/(?!simulator/|cli/)|migrations/)' },
      to: { path: '^src/simulator/' },
    },
    {
      name: 'stage-folders-only',
      comment: 'every module of src/ belongs to a stage folder the rules above know (add a new folder to LAYERS)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/(?!(config|log|source|transform|store|sync|reconcile|export|verify|report|schedule|cli|simulator)/)' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles (type-only ones included): a cycle makes "below" meaningless and load order fragile',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to nothing is a typo or a missing dependency',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
