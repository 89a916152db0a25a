import type { GroupDirectory } from './groups.js';
import type { AppTruth, TruthCall } from './truth.js';

/**
 * What the truth is built from (AppDataset has it all). An interface rather than an import of
 * dataset.ts, which imports this module: no import cycle.
 */
export interface TruthDataset {
  readonly ctx: { appId: string; region: string };
  readonly indexCount: number;
  readonly groups: GroupDirectory;
  readonly details: { unusablePending(): number[] };
  sessionIdOf(index: number): string;
  truthCall(index: number): TruthCall | null;
  isRemoved(index: number): boolean;
  isMalformed(index: number): boolean;
  isNotFound(index: number): boolean;
}

/** Everything a perfect sync of the app ends with now (truth.ts), built by generating every call. */
export function buildTruth(ds: TruthDataset): AppTruth {
  const calls = new Map<string, TruthCall>();
  const notFound = new Set<string>();
  const malformed = new Set<string>();
  const removed = new Set<string>();
  const groupNumbers = new Set<number>();
  for (let i = ds.indexCount - 1; i >= 0; i--) {
    if (ds.isRemoved(i)) {
      removed.add(ds.sessionIdOf(i));
      continue;
    }
    if (ds.isMalformed(i)) {
      malformed.add(ds.sessionIdOf(i));
      continue;
    }
    const call = ds.truthCall(i);
    if (!call) continue;
    calls.set(call.sessionId, call);
    if (ds.isNotFound(i)) notFound.add(call.sessionId);
    if (call.receiverType === 'group' && call.receiver !== null) {
      const k = ds.groups.groupNumber(call.receiver);
      if (k !== null) groupNumbers.add(k);
    }
  }
  const groups = new Map<string, string[]>();
  const deletedGroups = new Set<string>();
  for (const k of [...groupNumbers].sort((a, b) => a - b)) {
    const guid = ds.groups.guidOf(k);
    if (ds.groups.isDeleted(k)) {
      groups.set(guid, []);
      deletedGroups.add(guid);
    } else {
      groups.set(guid, ds.groups.members(k).members.map((m) => m.uid));
    }
  }
  const unusableDetail = new Set(ds.details.unusablePending().map((i) => ds.sessionIdOf(i)));
  return { appId: ds.ctx.appId, region: ds.ctx.region, calls, notFound, malformed, groups, deletedGroups, removed, unusableDetail };
}
