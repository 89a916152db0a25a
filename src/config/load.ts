import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import { ConfigFileSchema, type DetailFetchMode, type Region } from './schema.js';
import { Secret } from './secret.js';

export interface AppSettings {
  readonly appId: string;
  readonly region: Region;
  readonly callsBaseUrl: string;
  readonly chatBaseUrl: string;
  readonly requestsPerMinute: number;
  readonly apiKeyEnv: string;
  /** Undefined when the named environment variable is not set: the sync stops this app only. */
  readonly apiKey: Secret | undefined;
}

export interface Settings {
  readonly database: string;
  readonly apps: readonly AppSettings[];
  readonly concurrency: number;
  readonly lookbackHours: number;
  readonly detailFetch: DetailFetchMode;
  readonly pageSize: number;
  readonly requestTimeoutMs: number;
  readonly maxAttempts: number;
  readonly logLevel: string;
  readonly schedule: { readonly cron: string; readonly timezone: string };
  readonly reconcileToleranceMinutes: number;
  readonly usageTimestampUnit: 's' | 'ms';
  /** Base of the exponential backoff between retries; tests shorten it. */
  readonly retryBaseMs: number;
}

/** The documented hosts (api-facts.md, Hosts). */
export function defaultBaseUrls(appId: string, region: Region): { callsBaseUrl: string; chatBaseUrl: string } {
  return {
    callsBaseUrl: `https://${appId}.call-${region}.cometchat.io/v3`,
    chatBaseUrl: `https://${appId}.api-${region}.cometchat.io/v3`,
  };
}

function formatIssue(source: string, issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(top level)';
  return `${source}: ${path}: ${issue.message}`;
}

/**
 * Validates a parsed config object and resolves defaults and secrets. Throws ConfigError naming
 * the first bad field; never reads files or the process environment itself (`env` is passed in).
 */
export function resolveConfig(input: unknown, env: Readonly<Record<string, string | undefined>>, source = 'config'): Settings {
  const parsed = ConfigFileSchema.safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ConfigError(first ? formatIssue(source, first) : `${source}: invalid`);
  }
  const c = parsed.data;
  const seen = new Set<string>();
  const apps = c.apps.map((a, i): AppSettings => {
    const key = `${a.appId}/${a.region}`;
    if (seen.has(key)) throw new ConfigError(`${source}: apps[${i}]: app ${a.appId} in region ${a.region} is listed twice; remove one entry`);
    seen.add(key);
    const defaults = defaultBaseUrls(a.appId, a.region);
    const raw = env[a.apiKeyEnv];
    return Object.freeze({
      appId: a.appId,
      region: a.region,
      callsBaseUrl: (a.callsBaseUrl ?? defaults.callsBaseUrl).replace(/\/$/, ''),
      chatBaseUrl: (a.chatBaseUrl ?? defaults.chatBaseUrl).replace(/\/$/, ''),
      requestsPerMinute: a.requestsPerMinute,
      apiKeyEnv: a.apiKeyEnv,
      apiKey: raw && raw.trim() ? new Secret(raw.trim()) : undefined,
    });
  });
  const retryBase = Number(env.CALLSYNC_RETRY_BASE_MS ?? '');
  return Object.freeze({
    database: env.CALLSYNC_DATABASE?.trim() || c.database,
    apps: Object.freeze(apps),
    concurrency: c.concurrency,
    lookbackHours: c.lookbackHours,
    detailFetch: c.detailFetch,
    pageSize: c.pageSize,
    requestTimeoutMs: c.requestTimeoutMs,
    maxAttempts: c.maxAttempts,
    logLevel: env.CALLSYNC_LOG_LEVEL?.trim() || c.logLevel,
    schedule: Object.freeze({ ...c.schedule }),
    reconcileToleranceMinutes: c.reconcileToleranceMinutes,
    usageTimestampUnit: c.usageTimestampUnit,
    retryBaseMs: Number.isFinite(retryBase) && retryBase > 0 ? retryBase : 500,
  });
}

/** Reads and resolves a JSON config file. */
export function loadConfigFile(path: string, env: Readonly<Record<string, string | undefined>>): Settings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new ConfigError(`config file ${path} not found; pass --config FILE, or run \`callsync demo\` to try it without an account`);
    }
    throw new ConfigError(`config file ${path} cannot be read (${code ?? 'error'}); check its permissions`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON (${(err as Error).message}); fix the file`);
  }
  return resolveConfig(json, env, path);
}
