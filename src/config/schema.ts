import cronParser from 'cron-parser';
import cron from 'node-cron';
import { z } from 'zod';

/** Regions of api-seed.md §1. */
export const REGIONS = ['us', 'eu', 'in'] as const;
export type Region = (typeof REGIONS)[number];

/** The free plan's limit (api-facts.md, Rate limits): a safe default for any account. */
export const DEFAULT_REQUESTS_PER_MINUTE = 500;

/**
 * `requestsPerMinute: "unlimited"`: no pacing at all, for a local simulator or a proxy (the benchmark
 * runs the CLI this way). load.ts refuses it for the service's own hosts, whose plans have a limit.
 */
export const UNLIMITED = 'unlimited';
export type RequestsPerMinute = number | typeof UNLIMITED;

/** Why schedule.cron or schedule.timezone is refused (here, and by schedule/nightly-sync.ts). */
export const CRON_PROBLEM = 'is not a valid cron expression (five fields, or six with seconds first; day names of three letters); e.g. "0 2 * * *" for 02:00 every night';
export const CRON_DAYS_PROBLEM = 'names both a day of the month and a day of the week, which the two schedulers read differently (both must match, or either may); restrict one and leave the other *';
export const CRON_SECONDS_PROBLEM = 'ticks more than once a minute (its seconds field); give one second (e.g. "0 0 2 * * *") or five fields: a tick every few seconds would mostly find the one before it still syncing';
export const TIMEZONE_PROBLEM = 'is not an IANA time zone; e.g. "UTC" or "Europe/Berlin"';

/**
 * Why a cron expression is refused, or undefined: the expression must mean the same to both
 * schedulers, node-cron (`schedule` on SQLite) and cron-parser 4, which pg-boss uses (`schedule` on
 * PostgreSQL).
 * - Both must read it: node-cron alone also takes `0 2 * * Monday` and `5-1 * * * *`, which passed
 *   `config check` and then stopped `schedule` on PostgreSQL without naming the variable (probe
 *   round 21 #10).
 * - Not both a day of the month and a day of the week: node-cron runs when both match (`0 2 13 * 5`
 *   on Friday the 13th only), cron-parser when either does (every Friday and every 13th).
 * - A seconds field, if any, is one second. pg-boss's own schedule sent at most once a minute, so
 *   `*\/20 * * * * *` ticked every 20 s on SQLite and at most once a minute on PostgreSQL (probe
 *   round 22). Both schedulers now read slots with cron-parser (schedule/cron-timer.ts), but a
 *   nightly sync has no use for more than one tick a minute, so the rule stays.
 */
export function cronProblem(expression: string): string | undefined {
  if (!cron.validate(expression)) return CRON_PROBLEM;
  try {
    cronParser.parseExpression(expression, { tz: 'UTC' });
  } catch {
    return CRON_PROBLEM;
  }
  const fields = expression.trim().split(/\s+/);
  if (fields.length === 6 && !/^\d{1,2}$/.test(fields[0]!)) return CRON_SECONDS_PROBLEM;
  const [dayOfMonth, , dayOfWeek] = fields.slice(-3);
  if (fields.length >= 5 && !isAny(dayOfMonth!) && !isAny(dayOfWeek!)) return CRON_DAYS_PROBLEM;
  return undefined;
}

/** A field that matches every value: `*` (or `?`), with no step. */
function isAny(field: string): boolean {
  return field === '*' || field === '?';
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const baseUrl = z
  .url({ message: 'must be an http(s) URL ending in /v3' })
  .refine((u) => /^https?:\/\//.test(u) && /\/v3\/?$/.test(u), 'must be an http(s) URL ending in /v3');

export const AppConfigSchema = z.strictObject({
  appId: z.string().min(1).regex(/^[A-Za-z0-9_-]+$/, 'must be the App ID from the dashboard (letters, digits, - and _)'),
  region: z.enum(REGIONS),
  /** Name of the environment variable that holds the REST API key (never the key itself). */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name such as COMETCHAT_API_KEY'),
  callsBaseUrl: baseUrl.optional(),
  chatBaseUrl: baseUrl.optional(),
  requestsPerMinute: z.union([z.number().int().positive().max(100_000), z.literal(UNLIMITED)]).default(DEFAULT_REQUESTS_PER_MINUTE),
  /** Plain http:// to a host that is not loopback would send the key in clear: refused unless this is set. */
  allowInsecureHttp: z.boolean().default(false),
});

export const DETAIL_FETCH_MODES = ['auto', 'always'] as const;
export type DetailFetchMode = (typeof DETAIL_FETCH_MODES)[number];

export const ConfigFileSchema = z.strictObject({
  database: z.string().min(1).default('data/callsync.db'),
  apps: z.array(AppConfigSchema).min(1, 'configure at least one app'),
  /** Concurrent Get Call requests per app. */
  concurrency: z.number().int().min(1).max(64).default(8),
  /** How far behind the watermark (newest startedAt seen) an incremental run re-lists calls. */
  lookbackHours: z.number().min(0).max(24 * 365).default(72),
  /** An incremental run lists everything when the last proved full listing is this many days old (0: every run). */
  fullSyncEveryDays: z.number().min(0).max(3650).default(7),
  detailFetch: z.enum(DETAIL_FETCH_MODES).default('auto'),
  /** A call time beyond now + this is a clock error: the call is stored, the watermark does not move to it. */
  maxClockSkewMinutes: z.number().min(0).max(7 * 24 * 60).default(10),
  /** A final call that looks unsettled (recording or minutes still missing) is fetched again for this many days after it ended. */
  settleDays: z.number().min(0).max(365).default(3),
  /** A call live (initiated/ongoing) longer than this is marked stale and no longer fetched every run. */
  liveMaxDays: z.number().min(1).max(3650).default(7),
  /** Largest response body read (bytes, while streaming); a larger one is a non-retryable error for that request. */
  maxResponseBytes: z.number().int().min(1024).max(2 ** 31).default(32 * 1024 * 1024),
  /** List Calls pages one app may read in one run; hitting it fails the app loudly (an endless listing). */
  maxPagesPerRun: z.number().int().min(1).max(10_000_000).default(100_000),
  /** Members one group may have (held in memory until the listing adds up: ~100 MB at the default); hitting it fails the app loudly. */
  maxMembersPerGroup: z.number().int().min(1).max(10_000_000).default(200_000),
  /** `callsync query` on PostgreSQL: the server cancels a statement running longer than this. */
  queryTimeoutSeconds: z.number().int().min(1).max(86_400).default(60),
  /** Name of an environment variable holding the PostgreSQL password (PGPASSWORD is read too), so it need not sit in the URL. */
  databasePasswordEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name such as CALLSYNC_DB_PASSWORD').optional(),
  /** perPage asked of List Calls; the server may answer with fewer. */
  pageSize: z.number().int().min(1).max(1000).default(100),
  requestTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
  maxAttempts: z.number().int().min(1).max(20).default(6),
  /** SQLite: the database lease, not renewed for this long, is taken over (PostgreSQL uses advisory locks). */
  leaseTtlSeconds: z.number().int().min(5).max(3600).default(60),
  /** Two minute figures "agree" in reconciliation when within this (float rounding). */
  reconcileToleranceMinutes: z.number().min(0).max(60).default(0.01),
  /** Unit of Usage Metrics' fromDate/toDate: described as unix timestamps, but the published example uses ms. */
  usageTimestampUnit: z.enum(['s', 'ms']).default('s'),
  /** `callsync schedule`: when to sync, and what to do after each sync. */
  schedule: z
    .strictObject({
      /** node-cron expression (minute hour day month weekday; an optional leading seconds field). */
      // Checked with the rest of the config (not only when a schedule starts), so the line names the
      // variable that set it: CALLSYNC_SCHEDULE_CRON's error named only schedule.cron.
      cron: z
        .string()
        .min(1)
        .default('0 2 * * *')
        .superRefine((v, ctx) => {
          const problem = cronProblem(v);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      timezone: z.string().min(1).default('UTC').refine(isTimeZone, TIMEZONE_PROBLEM),
      /** Print the reconciliation summary after each tick's sync. */
      reconcile: z.boolean().default(true),
      /** On this day of the month, a tick also writes the previous month's billing export. 0 = never. */
      exportDayOfMonth: z.number().int().min(0).max(28).default(1),
      exportDir: z.string().min(1).default('exports'),
      exportFormat: z.enum(['csv', 'json']).default('csv'),
      // PostgreSQL only: the job engine (pg-boss) that shares the apps among workers.
      /** Apps one worker syncs at once. */
      workerConcurrency: z.number().int().min(1).max(32).default(4),
      /** A failed app's job is tried again this many times within the tick, with backoff. */
      retryLimit: z.number().int().min(0).max(20).default(3),
      /** Seconds before the first retry (5 to 10 min with backoff's jitter); each later one waits about twice as long. */
      retryDelaySeconds: z.number().int().min(1).max(86_400).default(300),
      retryBackoff: z.boolean().default(true),
      /** An app's job still active after this is taken to be lost with its worker and tried again: longer than any app's sync. */
      jobExpirySeconds: z.number().int().min(5).max(82_800).default(14_400),
      /** How often an idle worker asks for a job. */
      pollIntervalSeconds: z.number().min(0.5).max(60).default(2),
      /** How often the engine looks for expired jobs (one worker at a time does it). */
      expiryCheckSeconds: z.number().int().min(1).max(3_600).default(60),
    })
    .prefault({}),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('warn'),
});

export type ConfigFile = z.input<typeof ConfigFileSchema>;
export type AppConfigFile = z.input<typeof AppConfigSchema>;
