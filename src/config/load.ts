import { readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { parse as parseJsonc, printParseErrorCode, visit as visitJsonc, type ParseError } from 'jsonc-parser';
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import { describeIssue, pathText } from './issues.js';
import { looksLikeKey } from './key-shape.js';
import { ConfigFileSchema, UNLIMITED, type Region, type RequestsPerMinute } from './schema.js';
import { Secret } from './secret.js';

export type Env = Readonly<Record<string, string | undefined>>;
type FileConfig = z.output<typeof ConfigFileSchema>;

export interface AppSettings {
  readonly appId: string;
  readonly region: Region;
  readonly callsBaseUrl: string;
  readonly chatBaseUrl: string;
  /** "unlimited" (a simulator or proxy only, never the service's hosts): requests are not paced. */
  readonly requestsPerMinute: RequestsPerMinute;
  readonly apiKeyEnv: string;
  /** Undefined when the named environment variable is not set: `sync` and `schedule` refuse to start (assertApiKeys). */
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

/** The service's own hosts (*.cometchat.io, as defaultBaseUrls builds them): plans there have a rate limit. */
function isServiceHost(hostname: string): boolean {
  const h = hostname.replace(/\.$/, '').toLowerCase();
  return h === 'cometchat.io' || h.endsWith('.cometchat.io');
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

export { looksLikeKey } from './key-shape.js';

/** A problem found by the checks zod cannot express (they need several fields at once). */
interface Problem {
  readonly path: string;
  readonly text: string;
}

/**
 * Checks across fields, run on the raw apps even when other fields are invalid, so that every
 * problem is reported in the same pass. Only values of the right type are looked at.
 */
function appProblems(rawApps: unknown): Problem[] {
  if (!Array.isArray(rawApps)) return [];
  const out: Problem[] = [];
  const seen = new Map<string, number>();
  rawApps.forEach((raw: unknown, i) => {
    if (!raw || typeof raw !== 'object') return;
    const a = raw as Record<string, unknown>;
    // Refused before anything prints, logs or stores the value; the message names the field only.
    if (typeof a.apiKeyEnv === 'string' && looksLikeKey(a.apiKeyEnv)) {
      out.push({ path: `apps[${i}].apiKeyEnv`, text: 'looks like an API key, not the NAME of an environment variable; put the key in a variable (e.g. COMETCHAT_KEY_MAIN) and write that name here' });
    }
    if (typeof a.appId === 'string' && typeof a.region === 'string') {
      const key = `${a.appId}/${a.region}`;
      const first = seen.get(key);
      if (first !== undefined) out.push({ path: `apps[${i}]`, text: `app ${a.appId} in region ${a.region} is listed twice (also apps[${first}]); remove one entry` });
      else seen.set(key, i);
    }
    if (a.requestsPerMinute === UNLIMITED) {
      // An omitted base URL is the service's documented host. One line per app, whichever URL it is.
      const toService = (['callsBaseUrl', 'chatBaseUrl'] as const).some((f) => {
        const url = a[f];
        if (url === undefined) return true;
        return typeof url === 'string' && URL.canParse(url) && isServiceHost(new URL(url).hostname);
      });
      if (toService) {
        out.push({ path: `apps[${i}].requestsPerMinute`, text: `app ${String(a.appId)} talks to the service's own hosts (*.cometchat.io), where "unlimited" would run into the plan's rate limit; set the plan's limit (e.g. 500): "unlimited" is only for a local simulator or a proxy (callsBaseUrl and chatBaseUrl pointing there)` });
      }
    }
    for (const field of ['callsBaseUrl', 'chatBaseUrl'] as const) {
      const url = a[field];
      if (typeof url !== 'string' || a.allowInsecureHttp === true || !URL.canParse(url)) continue;
      // The apikey header would cross the network in clear; the simulator and tests stay on loopback.
      const u = new URL(url);
      if (u.protocol === 'http:' && !isLoopback(u.hostname)) {
        out.push({ path: `apps[${i}].${field}`, text: `app ${String(a.appId)} uses plain http:// to a host that is not loopback, which sends the API key in clear; use https:// or set "allowInsecureHttp": true on the app` });
      }
    }
  });
  return out;
}

/** A database given as a plain path (not a postgres:// URL, not SQLite's in-memory name). */
function isFilePath(database: string): boolean {
  return !/^postgres(ql)?:\/\//i.test(database) && database !== ':memory:';
}

/** Options of resolveConfig beyond the flags. */
export interface ResolveOptions {
  /**
   * The folder of the config file: a relative `database` or `schedule.exportDir` read from the file
   * (or its default) is taken from there, so running from another folder opens the same database
   * and writes the exports to the same folder.
   * Values from CALLSYNC_DATABASE or --database stay relative to the current folder, as any path
   * typed in a shell is.
   */
  readonly baseDir?: string;
}

/**
 * Validates a parsed config object and resolves, in order of precedence, flags over environment over
 * file over defaults; API keys are read from the variables the apps name. Throws one ConfigError
 * listing every problem found, one line each, in plain words, naming the field and where its value
 * came from (the file, an environment variable or a flag). Never reads files or process.env itself.
 */
export function resolveConfig(input: unknown, env: Env, source = 'config', flags: ConfigFlags = {}, opts: ResolveOptions = {}): Settings {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new ConfigError(`${source}: must be a JSON object with at least "apps"`);
  const merged = structuredClone(input) as Record<string, unknown>;
  const origins = new Map<string, string>();
  for (const o of ENV_OVERRIDES) {
    const raw = env[o.env]?.trim();
    if (!raw) continue;
    // A number that does not parse is passed on as text: the schema then names the variable and
    // what it takes, with the other problems, instead of stopping at this one.
    // Decimal only: Number() also reads 0x10 and 0b11, which nobody means for an hour count.
    const value = o.kind === 'number' && /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw) ? Number(raw) : raw;
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
  const extra = appProblems(merged.apps);
  const parsed = ConfigFileSchema.safeParse(merged, { reportInput: true });
  if (!parsed.success || extra.length) {
    const flagged = new Set(extra.map((p) => p.path));
    const lines = (parsed.success ? [] : parsed.error.issues)
      // A pasted key also fails the name pattern: said once, by the clearer line.
      .filter((i) => !flagged.has(pathText(i.path)))
      .map((i) => describeIssue(source, i, origins));
    lines.push(...extra.map((p) => `${source}: ${p.path}: ${p.text}`));
    throw new ConfigError(lines.length ? lines : [`${source}: invalid`]);
  }
  const c = parsed.data;
  const database = opts.baseDir && !origins.has('database') && isFilePath(c.database) ? resolvePath(opts.baseDir, c.database) : c.database;
  // The export folder follows the same rule as the database: a scheduler started from another folder
  // wrote the monthly export somewhere nobody looked.
  const exportDir = opts.baseDir && !origins.has('schedule.exportDir') ? resolvePath(opts.baseDir, c.schedule.exportDir) : c.schedule.exportDir;
  const apps = c.apps.map((a): AppSettings => {
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
      allowInsecureHttp: a.allowInsecureHttp,
    });
  });
  const retryBase = Number(env.CALLSYNC_RETRY_BASE_MS ?? '');
  return Object.freeze({
    ...c,
    database,
    apps: Object.freeze(apps),
    schedule: Object.freeze({ ...c.schedule, exportDir }),
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
    // A byte order mark (Windows Notepad saves one) is not part of the JSON: refused, the file was
    // called invalid JSON at line 1 column 1 (probe round 17 b).
    text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
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
  const twice = duplicateKey(text);
  if (twice) throw new ConfigError(`${path}: "${twice.path}" is given twice (line ${twice.line}); JSON takes the last silently, so keep one`);
  return resolveConfig(json, env, path, flags, { baseDir: dirname(resolvePath(path)) });
}

/**
 * The first key an object of the file holds twice, with its dotted path and line: the parser keeps
 * the last, so a second `"database"` or `"apps"` replaced the first without a word (probe round 17 b).
 */
function duplicateKey(text: string): { path: string; line: number } | undefined {
  const open: Set<string>[] = [];
  let found: { path: string; line: number } | undefined;
  visitJsonc(text, {
    onObjectBegin: () => void open.push(new Set()),
    onObjectEnd: () => void open.pop(),
    onObjectProperty: (name, _offset, _length, startLine, _char, pathSupplier) => {
      const keys = open[open.length - 1];
      if (!keys || found) return;
      if (keys.has(name)) found = { path: [...pathSupplier(), name].map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k)).join(''), line: startLine + 1 };
      keys.add(name);
    },
  }, { allowTrailingComma: true, disallowComments: false });
  return found;
}

/** The resolved config as printable JSON: every key shown as *** (or as missing), never its value. */
export function describeSettings(s: Settings): Record<string, unknown> {
  const { retryBaseMs: _r, busyTimeoutMs: _b, ...rest } = s;
  return {
    ...rest,
    apps: s.apps.map((a) => ({ ...a, apiKey: a.apiKey ? '***' : `(missing: environment variable ${a.apiKeyEnv} is not set)` })),
  };
}
