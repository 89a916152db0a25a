import { startSimulator } from './start-simulator.js';
import type { FaultProfile, SimAppSpec, Simulator } from './types.js';

export interface SimulatorCliOptions {
  port: number;
  host: string;
  apps: SimAppSpec[];
  faults: FaultProfile;
  /** Unix seconds the dataset ends at (the caller decides: the CLI passes the current hour). */
  now: number;
  /** The variable the printed config names for the key (the key itself is the apps' apiKey). */
  apiKeyEnv: string;
  /** The printed config's database. */
  database: string;
  /** The printed config's requestsPerMinute per app. */
  requestsPerMinute: number;
}

/**
 * The config a sync needs to read this simulator, as JSON a user pastes into callsync.config.json.
 * Kept to the fields of the config schema (the simulator imports no other stage, so it is not
 * validated here; the `simulate` test syncs with it).
 */
export function simulatorConfigSnippet(sim: Simulator, opts: Pick<SimulatorCliOptions, 'apps' | 'apiKeyEnv' | 'database' | 'requestsPerMinute'>): string {
  const apps = opts.apps.map((a) => ({
    appId: a.appId,
    region: a.region,
    apiKeyEnv: opts.apiKeyEnv,
    ...sim.baseUrls(a.appId),
    requestsPerMinute: opts.requestsPerMinute,
  }));
  return JSON.stringify({ database: opts.database, apps }, null, 2);
}

/** The key as one shell word (single-quoted when it holds anything but plain characters). */
function shellWord(v: string): string {
  return /^[A-Za-z0-9_.:/=+-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/**
 * `callsync simulate`: starts the simulator and prints each app's two base URLs, the API key and a
 * config that syncs it. The key IS printed: it is the simulator's own (it guards a fake service and
 * sits in docker-compose.yml), not a customer's, and a sync cannot start without it.
 * The caller owns the returned simulator and closes it on shutdown.
 */
export async function runSimulatorCli(opts: SimulatorCliOptions): Promise<Simulator> {
  const sim = await startSimulator({ apps: opts.apps, faults: opts.faults, port: opts.port, host: opts.host, now: opts.now });
  const key = opts.apps[0]?.apiKey ?? '';
  const lines = [`callsync simulator listening on ${sim.url} (its clock: ${new Date(opts.now * 1000).toISOString()}, the newest calls end there)`];
  for (const app of opts.apps) {
    const { callsBaseUrl, chatBaseUrl } = sim.baseUrls(app.appId);
    lines.push(`  app ${app.appId} (region ${app.region}, ${app.calls} calls, seed ${app.seed ?? '(appId)'})`);
    lines.push(`    calls base: ${callsBaseUrl}`);
    lines.push(`    chat base:  ${chatBaseUrl}`);
  }
  lines.push(
    '',
    `API key of every app (the simulator's own, not a secret): ${key}`,
    `  export ${opts.apiKeyEnv}=${shellWord(key)}`,
    '',
    'A config that syncs it (save as callsync.config.json, then `npx callsync sync`):',
    simulatorConfigSnippet(sim, opts),
    '',
    'Stop it with Ctrl-C.',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  return sim;
}
