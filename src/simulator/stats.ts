import type { SimStats } from './types.js';

export function emptyStats(): SimStats {
  return { requests: 0, list: 0, get: 0, members: 0, stats: 0, other: 0, http429: 0, http5xx: 0, reset: 0, truncate: 0, stall: 0, notFound: 0, auth: 0 };
}

export function addStats(into: SimStats, from: SimStats): void {
  for (const key of Object.keys(into) as (keyof SimStats)[]) into[key] += from[key];
}

export function zeroStats(s: SimStats): void {
  for (const key of Object.keys(s) as (keyof SimStats)[]) s[key] = 0;
}
