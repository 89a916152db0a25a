import { Rng } from './prng.js';
import { validateDetailQuirks } from './detail-quirks.js';
import { validateQuirks } from './quirks.js';
import type { FaultProfile } from './types.js';

/** How long a stall lasts by default: longer than any sane client timeout. */
export const DEFAULT_STALL_MS = 60_000;

export type RandomFault = 'none' | '429' | '5xx' | 'reset';

/** Outcome of rolling the dice for one request. */
export interface FaultRoll {
  fault: RandomFault;
  stall: boolean;
  truncate: boolean;
}

function checkRate(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!(value >= 0 && value <= 1)) throw new Error(`FaultProfile.${name} must be a probability in [0, 1], got ${value}`);
}

function checkCount(name: string, value: number | undefined, min: number): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min) throw new Error(`FaultProfile.${name} must be an integer >= ${min}, got ${value}`);
}

/** Throws on a profile that cannot mean anything, naming the field to fix. */
export function validateFaults(f: FaultProfile): void {
  checkRate('http429Rate', f.http429Rate);
  checkRate('http5xxRate', f.http5xxRate);
  checkRate('resetRate', f.resetRate);
  checkRate('truncateRate', f.truncateRate);
  checkRate('stallRate', f.stallRate);
  checkCount('rateLimitPerMinute', f.rateLimitPerMinute, 0); // 0 = off
  checkCount('rateLimitWindowSeconds', f.rateLimitWindowSeconds, 1);
  checkCount('stallMs', f.stallMs, 0);
  checkCount('latencyMs', f.latencyMs, 0);
  checkCount('notFoundCalls', f.notFoundCalls, 0);
  checkCount('malformedCalls', f.malformedCalls, 0);
  checkCount('emptyPageAt', f.emptyPageAt, 1);
  for (const [name, spec] of [['insertWhilePaging', f.insertWhilePaging], ['removeWhilePaging', f.removeWhilePaging]] as const) {
    if (spec === undefined) continue;
    checkCount(`${name}.afterPage`, spec.afterPage, 1);
    checkCount(`${name}.count`, spec.count, 0);
  }
  if (f.quirks !== undefined) validateQuirks(f.quirks);
  if (f.details !== undefined) validateDetailQuirks(f.details);
}

/** Seeded dice, so a failing test replays the same faults for the same request order. */
export class FaultDice {
  private rng: Rng;

  constructor(private profile: FaultProfile) {
    this.rng = new Rng(profile.faultSeed ?? 1);
  }

  get hasRandomFaults(): boolean {
    const f = this.profile;
    return !!(f.http429Rate || f.http5xxRate || f.resetRate || f.stallRate || f.truncateRate);
  }

  /** Rolls each enabled fault independently, in a fixed order (one draw per enabled fault). */
  roll(): FaultRoll {
    const f = this.profile;
    let fault: RandomFault = 'none';
    if (f.http429Rate && this.rng.next() < f.http429Rate) fault = '429';
    else if (f.http5xxRate && this.rng.next() < f.http5xxRate) fault = '5xx';
    else if (f.resetRate && this.rng.next() < f.resetRate) fault = 'reset';
    const stall = !!f.stallRate && fault !== 'reset' && this.rng.next() < f.stallRate;
    const truncate = !!f.truncateRate && fault === 'none' && this.rng.next() < f.truncateRate;
    return { fault, stall, truncate };
  }
}
