/**
 * A local stand-in for CometChat's Calls and Chat APIs (api-seed.md, api-facts.md): deterministic
 * datasets up to millions of calls, every documented field variant, injectable faults, and the
 * ground truth a perfect sync must end with.
 */
export { startSimulator, DEFAULT_NOW, DEFAULT_MAX_PER_PAGE } from './start-simulator.js';
export { runSimulatorCli } from './cli.js';
export { classifyCall, parseTimer, formatTimer, MINUTES_TOLERANCE, ISSUE_CODES, type IssueCode } from './classify.js';
export type {
  AdvanceOptions,
  AdvanceResult,
  FaultProfile,
  ListingQuirks,
  Region,
  SimAppSpec,
  SimStats,
  Simulator,
  SimulatorOptions,
} from './types.js';
export type { AppTruth, TruthCall, TruthParticipant, TruthRecording, TruthRelation } from './truth.js';
