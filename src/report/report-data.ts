import type { BillingRow } from '../export/billing.js';
import type { Period } from '../export/period.js';
import type { CallReconciliationView } from '../store/schema.js';

/**
 * Everything the monthly report shows, read from the store once. Plain data, no formatting:
 * `renderReportHtml` turns it into the page, so the page can be tested without a database.
 */
export interface ReportData {
  period: Period;
  /** The database file the figures come from, as the reader should find it again. */
  databasePath: string;
  apps: ReportApp[];
  /**
   * What a reader must know before trusting the figures, one sentence each: apps whose figures may
   * be incomplete (stale, as the billing export marks them) and minutes no period includes.
   */
  notices: string[];
  /** From `computeBilling`, so the report and the billing export always agree. */
  billing: BillingRow[];
  daily: DailyUsage;
  relations: RelationCount[];
  /** Calls whose totals match neither their participants nor the wall clock, largest first. */
  mismatches: MismatchRow[];
  topUsers: TopUserRow[];
  topGroups: TopGroupRow[];
}

export interface ReportApp {
  appId: string;
  region: string;
  /** End of the app's last completed sync (unix seconds): how fresh the figures are. */
  lastSuccessAt: number | null;
}

export type Relation = CallReconciliationView['relation'];

/** Fixed display order: the healthy relations first. */
export const RELATIONS: readonly Relation[] = ['participant_sum', 'wall_clock', 'mismatch', 'incomplete'];

export interface DailyUsage {
  /**
   * 'utc': days are UTC dates from the `daily_usage` view (the period is in UTC anyway);
   * 'local': days are the period time zone's calendar days, bucketed from `calls.started_at`.
   */
  basis: 'utc' | 'local';
  /** Every day of the period, in order, with or without calls. */
  days: string[];
  /** Call types with minutes in the period, sorted: the stacks of the chart, in order. */
  types: string[];
  /** One point per day and type that had calls. */
  points: DailyTypeMinutes[];
}

export interface DailyTypeMinutes {
  day: string;
  type: string;
  calls: number;
  userMinutes: number;
}

export interface RelationCount {
  relation: Relation;
  calls: number;
  userMinutes: number;
}

export interface MismatchRow {
  appId: string;
  region: string;
  sessionId: string;
  type: string;
  startedAt: number | null;
  userMinutes: number;
  callMinutes: number | null;
  wallClockMinutes: number | null;
  /** user-minutes − call-level minutes, the sign of the billing export's delta. */
  deltaMinutes: number;
  issues: string[];
}

export interface TopUserRow {
  appId: string;
  uid: string;
  /** The name group membership gave the user, when any group of the app lists them. */
  name: string | null;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  userMinutes: number;
}

export interface TopGroupRow {
  appId: string;
  guid: string | null;
  calls: number;
  userMinutes: number;
  /** Members at the last membership sync; 0 when membership was never synced. */
  membersAtLastSync: number;
  /** Mean over the group's calls of joined members ÷ members; null without membership. */
  attendanceRate: number | null;
}
