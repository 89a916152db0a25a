import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../config/errors.js';
import { simulatorBaseUrls } from '../simulator/index.js';
import { databaseExists, maskDatabaseUrl, resolveDestination } from '../store/destinations/index.js';
import { currentSimNow, monthBefore } from './sim-now.js';

/** The simulator's key and the variable the demo's config names: not a secret, it guards a fake. */
export const SIM_KEY_ENV = 'CALLSYNC_SIM_API_KEY';
export const SIM_DEFAULT_KEY = 'simulator-key';
/** The port the demo's config points at, where `callsync simulate --demo` listens by default. */
export const DEMO_SIM_PORT = 4500;
export const DEMO_DATABASE = 'data/demo.db';
/** The file the data commands read when no --config is given (configPath's default). */
export const CONFIG_FILE = 'callsync.config.json';
/** The simulator is local: a generous rate keeps the demo and its re-syncs to seconds. */
const DEMO_REQUESTS_PER_MINUTE = 60_000;

const DemoFileSchema = z.object({
  now: z.number().int().min(0),
  port: z.number().int().min(0).max(65_535),
  database: z.string().min(1),
  apps: z
    .array(z.object({ appId: z.string().min(1), region: z.enum(['us', 'eu', 'in']), calls: z.number().int().min(0), seed: z.number().int().min(0) }))
    .min(1),
});
/** What the demo's simulator was: same values → same calls, so a later sync of them is incremental. */
export type DemoSimulator = z.output<typeof DemoFileSchema>;

/** The demo's two apps for `--calls n`, ending at `now`. */
export function newDemoSimulator(calls: number, database: string, port: number, now = currentSimNow()): DemoSimulator {
  return {
    now,
    port,
    database,
    apps: [
      { appId: 'demo-app', region: 'us', calls, seed: 7 },
      { appId: 'demo-eu', region: 'eu', calls: Math.ceil(calls / 2), seed: 8 },
    ],
  };
}

/**
 * Where the demo records its simulator: beside the database (data/demo.db → data/demo-simulator.json),
 * so two demo databases do not share one. A PostgreSQL database has no folder: data/ is used.
 */
export function demoFilePath(database: string): string {
  if (!resolveDestination(database).capabilities.localFile) return join('data', 'demo-simulator.json');
  return join(dirname(database), `${basename(database, extname(database))}-simulator.json`);
}

/** The recorded simulator, or undefined when the file does not exist. */
export function readDemoFile(path: string): DemoSimulator | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}); check its permissions`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = DemoFileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`${path} is not a demo simulator record; delete it and the demo database, then run \`callsync demo\` again`);
  return parsed.data;
}

export function writeDemoFile(path: string, demo: DemoSimulator): void {
  mkdirSync(dirname(path), { recursive: true });
  const about = 'Written by `callsync demo`: the simulator its database was synced from. `callsync simulate --demo` serves the same calls.';
  writeFileSync(path, `${JSON.stringify({ about, ...demo }, null, 2)}\n`);
}

/**
 * The demo's simulator: the recorded one when its database already exists (the run is then
 * incremental against the same calls), else a new one ending at the current hour.
 */
export function demoSimulatorFor(database: string, calls: number, port: number | undefined): { demo: DemoSimulator; reused: boolean; path: string } {
  const path = demoFilePath(database);
  const recorded = databaseExists(database) ? readDemoFile(path) : undefined;
  if (recorded) return { demo: port === undefined ? recorded : { ...recorded, port }, reused: true, path };
  return { demo: newDemoSimulator(calls, database, port ?? DEMO_SIM_PORT), reused: false, path };
}

/** One shell word (single-quoted when it holds anything but plain characters). */
export function shellArg(v: string): string {
  return /^[A-Za-z0-9_.,:/=+@%-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** The config the demo leaves behind (JSONC: the comments say how to use it). */
export function demoConfigText(demo: DemoSimulator, demoFile: string): string {
  const url = `http://127.0.0.1:${demo.port}`;
  const apps = demo.apps.map((a) => ({ appId: a.appId, region: a.region, apiKeyEnv: SIM_KEY_ENV, ...simulatorBaseUrls(url, a.appId, a.region), requestsPerMinute: DEMO_REQUESTS_PER_MINUTE }));
  const simulate = `npx callsync simulate --demo${demoFile === demoFilePath(DEMO_DATABASE) ? '' : ` --demo-file ${shellArg(demoFile)}`}`;
  const body = JSON.stringify({ database: demo.database, apps }, null, 2);
  return [
    '// Written by `callsync demo`: the two demo apps on the bundled simulator, synced into the demo database.',
    '// The data commands read this file from this folder, e.g.:',
    '//   npx callsync query "select type, status, count(*) from calls group by 1, 2"',
    '// To sync again, start the simulator with the demo\'s calls in another terminal:',
    `//   ${simulate}`,
    '// then, here (the key is the simulator\'s own, not a secret):',
    `//   ${SIM_KEY_ENV}=${SIM_DEFAULT_KEY} npx callsync sync`,
    '// For your own apps: give each its appId, region and the NAME of the variable holding its key',
    '// (apiKeyEnv), drop callsBaseUrl/chatBaseUrl and requestsPerMinute, and use another database.',
    body,
    '',
  ].join('\n');
}

/**
 * Writes callsync.config.json in the current folder unless one exists (never overwritten) or the
 * database is a PostgreSQL URL (the file would carry its password). Says what it did in one line.
 */
export function writeDemoConfig(demo: DemoSimulator, demoFile: string): { written: boolean; line: string } {
  const destination = resolveDestination(demo.database);
  if (destination.capabilities.passwordLogin) {
    return { written: false, line: `${CONFIG_FILE} not written: the demo database is a ${destination.label} URL (a config would carry its password); the commands below name it with --database` };
  }
  if (existsSync(CONFIG_FILE)) {
    return { written: false, line: `${CONFIG_FILE} exists already and was left as it is; the commands below name the demo database with --database` };
  }
  writeFileSync(CONFIG_FILE, demoConfigText(demo, demoFile), { flag: 'wx' });
  return { written: true, line: `Wrote ${CONFIG_FILE}: it points at ${demo.database} and at the simulator (http://127.0.0.1:${demo.port}), so the commands below need no flags.` };
}

/** The demo's closing lines: what to try next with callsync itself, and how to sync again. */
export function nextSteps(demo: DemoSimulator, demoFile: string, configWritten: boolean): string[] {
  const month = monthBefore(demo.now);
  const db = configWritten ? '' : ` --database ${shellArg(maskDatabaseUrl(demo.database))}`;
  const simulate = `npx callsync simulate --demo${demoFile === demoFilePath(DEMO_DATABASE) ? '' : ` --demo-file ${shellArg(demoFile)}`}`;
  const lines = [
    'Next, try (in this folder):',
    `  npx callsync query "select type, status, count(*) from calls group by 1, 2"${db}`,
    `  npx callsync report --month ${month}${db}            # writes report-${month}.html`,
    `  npx callsync export billing --month ${month}${db}    # CSV on stdout (--out FILE to save it)`,
    'To sync again, start the demo\'s simulator in another terminal:',
    `  ${simulate}`,
  ];
  if (configWritten) lines.push('then, here:', `  ${SIM_KEY_ENV}=${SIM_DEFAULT_KEY} npx callsync sync`);
  else lines.push(`then sync with the config it prints (save it as a file and pass --config FILE), with ${SIM_KEY_ENV}=${SIM_DEFAULT_KEY} set.`);
  lines.push('The tables and views are documented in docs/schema.md.');
  return lines;
}
