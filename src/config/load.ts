import { readFileSync } from 'node:fs';
import { closest, distance } from 'fastest-levenshtein';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import { AppConfigSchema, ConfigFileSchema, type Region } from './schema.js';
import { Secret } from './secret.js';

export type Env = Readonly<Record<string, string | undefined>>;
type FileConfig = z.output<typeof ConfigFileSchema>;

export interface AppSettings {
  readonly appId: string;
  readonly region: Region;
  readonly callsBaseUrl: string;
  readonly chatBaseUrl: string;
  readonly requestsPerMinute: number;
  readonly apiKeyEnv: string;
  /** Undefined when the named environment variable is not set: the sync stops this app only. */
  readonly apiKey: Secret | undefined;
  /** Plain http:// to a host that is not loopback is allowed (the key then travels in clear). */
  readonly allowInsecureHttp: boolean;
}

/** Loopback hosts (127.0.0.0/8, ::1, localhost): plain http there never leaves the machine. */
function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The resolved configuration: flags over environment over file over defaults, secrets resolved. */
export type Settings = Readonly<Omit<FileConfig, 'apps' | 'schedule'>> & {
  readonly apps: readonly AppSettings[];
  readonly schedule: Readonly<FileConfig['schedule']>;
  /** Base of the exponential backoff between retries (CALLSYNC_RETRY_BASE_MS; tests shorten it). */
  readonly retryBaseMs: number;
  /** How long a SQLite writer waits for another process's lock (CALLSYNC_BUSY_TIMEOUT_MS). */
  readonly busyTimeoutMs: number;
};

/** Default wait for a SQLite lock held by another process. */
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

/** CALLSYNC_BUSY_TIMEOUT_MS, or the default. */
export function busyTimeoutMs(env: Env): number {
  const n = Number(env.CALLSYNC_BUSY_TIMEOUT_MS ?? '');
  return Number.isInteger(n) && n >= 0 && env.CALLSYNC_BUSY_TIMEOUT_MS?.trim() ? n : DEFAULT_BUSY_TIMEOUT_MS;
}

/** Command-line flags that override the config (the highest precedence). */
export interface ConfigFlags {
  database?: string;
  logLevel?: string;
}

/** The documented hosts (api-facts.md, Hosts). */
export function defaultBaseUrls(appId: string, region: Region): { callsBaseUrl: string; chatBaseUrl: string } {
  return {
    callsBaseUrl: `https://${appId}.call-${region}.cometchat.io/v3`,
    chatBaseUrl: `https://${appId}.api-${region}.cometchat.io/v3`,
  };
}

type EnvKind = 'string' | 'number';
/** Environment overrides: variable → config path. They beat the file and lose to flags. */
export const ENV_OVERRIDES: readonly { env: string; path: readonly string[]; kind: EnvKind }[] = [
  { env: 'CALLSYNC_DATABASE', path: ['database'], kind: 'string' },
  { env: 'CALLSYNC_LOG_LEVEL', path: ['logLevel'], kind: 'string' },
  { env: 'CALLSYNC_CONCURRENCY', path: ['concurrency'], kind: 'number' },
  { env: 'CALLSYNC_LOOKBACK_HOURS', path: ['lookbackHours'], kind: 'number' },
  { env: 'CALLSYNC_DETAIL_FETCH', path: ['detailFetch'], kind: 'string' },
  { env: 'CALLSYNC_PAGE_SIZE', path: ['pageSize'], kind: 'number' },
  { env: 'CALLSYNC_SCHEDULE_CRON', path: ['schedule', 'cron'], kind: 'string' },
  { env: 'CALLSYNC_SCHEDULE_TIMEZONE', path: ['schedule', 'timezone'], kind: 'string' },
  { env: 'CALLSYNC_EXPORT_DIR', path: ['schedule', 'exportDir'], kind: 'string' },
];

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

const pathText = (path: readonly PropertyKey[]): string =>
  path.length ? path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(top level)';

/** Known keys at a config path, for "did you mean". */
function knownKeys(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(ConfigFileSchema.shape);
  if (path[0] === 'apps') return Object.keys(AppConfigSchema.shape);
  if (path[0] === 'schedule') return ['cron', 'timezone', 'reconcile', 'exportDayOfMonth', 'exportDir', 'exportFormat'];
  return [];
}

function describeIssue(source: string, issue: z.core.$ZodIssue, origins: ReadonlyMap<string, string>): string {
  const where = pathText(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(issue.path);
    const parts = issue.keys.map((k) => {
      const near = known.length ? closest(k, known) : undefined;
      return near && distance(k, near) <= Math.max(2, Math.floor(near.length / 3)) ? `"${k}" (did you mean "${near}"?)` : `"${k}"`;
    });
    return `${source}: ${where}: unknown field ${parts.join(', ')}; remove it or fix its name (the fields are in the README)`;
  }
  const origin = origins.get(pathText(issue.path));
  return `${origin ?? source}: ${where}: ${issue.message}`;
}

/**
 * Whether an `apiKeyEnv` value looks like a key rather than a variable's name: a run of 16 or more
 * characters (between underscores) mixing letters and digits. CometChat REST keys are 40 hex
 * characters, which also pass as a variable name, so the name pattern alone lets a pasted key
 * through, to be printed by `config check`, logged and stored in sync_runs.error as "variable X".
 */
export function looksLikeKey(name: string): boolean {
  return name.split('_').some((part) => part.length >= 16 && /[0-9]/.test(part) && /[A-Za-z]/.test(part));
}

/**
 * Validates a parsed config object and resolves, in order of precedence, flags over environment over
 * file over defaults; API keys are read from the variables the apps name. Throws ConfigError naming
 * the first bad field (and where its value came from). Never reads files or process.env itself.
 */
export function resolveConfig(input: unknown, env: Env, source = 'config', flags: ConfigFlags = {}): Settings {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new ConfigError(`${source}: must be a JSON object with at least "apps"`);
  const merged = structuredClone(input) as Record<string, unknown>;
  const origins = new Map<string, string>();
  for (const o of ENV_OVERRIDES) {
    const raw = env[o.env]?.trim();
    if (!raw) continue;
    const value = o.kind === 'number' ? Number(raw) : raw;
    if (o.kind === 'number' && !Number.isFinite(value)) throw new ConfigError(`${o.env}=${JSON.stringify(raw)}: expected a number`);
    setPath(merged, o.path, value);
    origins.set(o.path.join('.'), o.env);
  }
  if (flags.database !== undefined) {
    merged.database = flags.database;
    origins.set('database', '--database');
  }
  if (flags.logLevel !== undefined) {
    merged.logLevel = flags.logLevel;
    origins.set('logLevel', '--log-level');
  }
  const parsed = ConfigFileSchema.safeParse(merged);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ConfigError(first ? describeIssue(source, first, origins) : `${source}: invalid`);
  }
  const c = parsed.data;
  // Refused before anything prints, logs or stores the value; the message names the field only.
  c.apps.forEach((a, i) => {
    if (looksLikeKey(a.apiKeyEnv)) {
      throw new ConfigError(`${source}: apps[${i}].apiKeyEnv: looks like an API key, not the NAME of an environment variable; put the key in a variable (e.g. COMETCHAT_KEY_MAIN) and write that name here`);
    }
  });
  const seen = new Set<string>();
  const apps = c.apps.map((a, i): AppSettings => {
    const key = `${a.appId}/${a.region}`;
    if (seen.has(key)) throw new ConfigError(`${source}: apps[${i}]: app ${a.appId} in region ${a.region} is listed twice; remove one entry`);
    seen.add(key);
    const defaults = defaultBaseUrls(a.appId, a.region);
    for (const field of ['callsBaseUrl', 'chatBaseUrl'] as const) {
      const url = a[field];
      // The apikey header would cross the network in clear; the simulator and tests stay on loopback.
      if (url && !a.allowInsecureHttp && new URL(url).protocol === 'http:' && !isLoopback(new URL(url).hostname)) {
        throw new ConfigError(`${source}: apps[${i}].${field}: app ${a.appId} uses plain http:// to a host that is not loopback, which sends the API key in clear; use https:// or set "allowInsecureHttp": true on the app`);
      }
    }
    const raw = env[a.apiKeyEnv];
    return Object.freeze({
      appId: a.appId,
      region: a.region,
      callsBaseUrl: (a.callsBaseUrl ?? defaults.callsBaseUrl).replace(/\/$/, ''),
      chatBaseUrl: (a.chatBaseUrl ?? defaults.chatBaseUrl).replace(/\/$/, ''),
      requestsPerMinute: a.requestsPerMinute,
      apiKeyEnv: a.apiKeyEnv,
      apiKey: raw && raw.trim() ? new Secret(raw.trim()) : undefined,
      allowInsecureHttp: a.allowInsecureHttp,
    });
  });
  const retryBase = Number(env.CALLSYNC_RETRY_BASE_MS ?? '');
  return Object.freeze({
    ...c,
    apps: Object.freeze(apps),
    schedule: Object.freeze({ ...c.schedule }),
    retryBaseMs: Number.isFinite(retryBase) && retryBase > 0 ? retryBase : 500,
    busyTimeoutMs: busyTimeoutMs(env),
  });
}

/** The config file path: --config, else CALLSYNC_CONFIG, else callsync.config.json. */
export function configPath(flag: string | undefined, env: Env): string {
  return flag ?? env.CALLSYNC_CONFIG ?? 'callsync.config.json';
}

/** Reads and resolves a JSON config file. */
export function loadConfigFile(path: string, env: Env, flags: ConfigFlags = {}): Settings {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new ConfigError(`config file ${path} not found; pass --config FILE (or set CALLSYNC_CONFIG), or run \`callsync demo\` to try it without an account`);
    }
    throw new ConfigError(`config file ${path} cannot be read (${code ?? 'error'}); check its permissions`);
  }
  // Comments and trailing commas are accepted (the README's example carries comments): jsonc-parser
  // is the parser VS Code uses for its own settings files, so what an editor shows as valid loads.
  const errors: ParseError[] = [];
  const json: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length) {
    // Only the position is quoted, never the text around it, which may be a key pasted unquoted.
    const first = errors[0]!;
    const before = text.slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    throw new ConfigError(`${path}: not valid JSON (${printParseErrorCode(first.error)} at line ${line} column ${column}); fix the file (comments and trailing commas are allowed)`);
  }
  return resolveConfig(json, env, path, flags);
}

/** The resolved config as printable JSON: every key shown as *** (or as missing), never its value. */
export function describeSettings(s: Settings): Record<string, unknown> {
  const { retryBaseMs: _r, busyTimeoutMs: _b, ...rest } = s;
  return {
    ...rest,
    apps: s.apps.map((a) => ({ ...a, apiKey: a.apiKey ? '***' : `(missing: environment variable ${a.apiKeyEnv} is not set)` })),
  };
}
