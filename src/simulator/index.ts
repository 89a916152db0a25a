/**
 * A local stand-in for CometChat's Calls and Chat APIs (api-seed.md, api-facts.md): deterministic
 * datasets up to millions of calls, every documented field variant, injectable faults, and the
 * ground truth a perfect sync must end with.
 */
export { startSimulator, simulatorBaseUrls, datasetSeed, DEFAULT_NOW, DEFAULT_MAX_PER_PAGE } from './start-simulator.js';
export { runSimulatorCli } from './cli.js';
export { classifyCall, parseTimer, formatTimer, MINUTES_TOLERANCE, ISSUE_CODES, type IssueCode } from './classify.js';
export type {
  AdvanceOptions,
  AdvanceResult,
  DetailQuirkCalls,
  DetailQuirks,
  FaultProfile,
  ListingQuirks,
  Region,
  SimAppSpec,
  SimStats,
  Simulator,
  SimulatorOptions,
  UnusableGetAnswer,
  UnusableGetSpec,
} from './types.js';
export type { AppTruth, TruthCall, TruthJson, TruthParticipant, TruthRecording, TruthRelation, TruthTranscription } from './truth.js';
export { UNUSABLE_GET_ANSWERS } from './detail-quirks.js';
