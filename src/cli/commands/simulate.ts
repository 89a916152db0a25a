import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { runSimulatorCli, type FaultProfile, type SimAppSpec, type Simulator } from '../../simulator/index.js';
import { DEMO_DATABASE, DEMO_SIM_PORT, demoFilePath, readDemoFile, SIM_DEFAULT_KEY, SIM_KEY_ENV } from '../demo-setup.js';
import { environment } from '../setup.js';
import { currentSimNow, parseSimNow } from '../sim-now.js';

interface SimulateFlags {
  port: string;
  host: string;
  apps: string;
  calls: string;
  seed: string;
  now?: string;
  demo?: boolean;
  demoFile: string;
  faults?: string;
  rateLimit?: string;
}

function intArg(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${flag} ${JSON.stringify(v)}: expected a whole number ≥ ${min}`);
  return n;
}

/** The apps, clock and port to serve: the demo's recorded ones with --demo, else the flags'. */
function plan(flags: SimulateFlags, given: (flag: string) => boolean, apiKey: string): { apps: SimAppSpec[]; now: number; port: number; database: string } {
  if (flags.demo) {
    const clash = ['apps', 'calls', 'seed', 'now'].filter(given);
    if (clash.length) throw new ConfigError(`--demo serves the demo's recorded apps and clock; leave out ${clash.map((f) => `--${f}`).join(', ')}`);
    const demo = readDemoFile(flags.demoFile);
    if (!demo) throw new ConfigError(`${flags.demoFile} not found: run \`callsync demo\` first (it records its simulator there), or pass --demo-file FILE`);
    return {
      apps: demo.apps.map((a) => ({ ...a, apiKey })),
      now: demo.now,
      port: given('port') ? intArg('--port', flags.port, 0) : demo.port,
      database: demo.database,
    };
  }
  const calls = intArg('--calls', flags.calls, 0);
  const seed = intArg('--seed', flags.seed, 0);
  const apps = flags.apps.split(',').map((pair): SimAppSpec => {
    const [appId, region] = pair.trim().split(':');
    if (!appId || (region !== 'us' && region !== 'eu' && region !== 'in')) {
      throw new ConfigError(`--apps ${JSON.stringify(pair)}: expected appId:region with region us, eu or in`);
    }
    return { appId, region, apiKey, calls, seed };
  });
  return { apps, now: flags.now === undefined ? currentSimNow() : parseSimNow('--now', flags.now), port: intArg('--port', flags.port, 0), database: 'data/callsync.db' };
}

/** A port or host that cannot be bound is a bad argument (exit 2), stated in one line. */
function bindError(err: unknown, port: number, host: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new ConfigError(`port ${port} is in use; pass --port N (0 picks a free one)`);
  if (code === 'EACCES') return new ConfigError(`port ${port} needs privileges to listen on; pass --port N above 1023 (0 picks a free one)`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new ConfigError(`--host ${JSON.stringify(host)} is not an address of this machine (${code}); e.g. 127.0.0.1 or 0.0.0.0`);
  }
  // startSimulator's own checks (an --apps appId it cannot serve) are bad arguments too.
  if (err instanceof Error && err.message.startsWith('simulator app ')) return new ConfigError(err.message);
  return err;
}

export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description('run the bundled simulator of the service (for demos, tests and benchmarks); prints its API key and a config that syncs it')
    .option('--port <n>', `port (0 = any free port; with --demo, default the demo's, ${DEMO_SIM_PORT})`, String(DEMO_SIM_PORT))
    .option('--host <h>', 'interface to listen on', '127.0.0.1')
    .option('--apps <list>', 'comma-separated appId:region pairs', 'sim-app:us')
    .option('--calls <n>', 'calls per app', '10000')
    .option('--seed <n>', 'data seed', '1')
    .option('--now <time>', "the simulator's clock, where its newest calls end: YYYY-MM-DD, ISO timestamp or unix seconds (default: the current hour)")
    .option('--demo', 'serve exactly the calls `callsync demo` synced (its apps, seeds and clock), so a sync after the demo is incremental')
    .option('--demo-file <file>', 'the record `callsync demo` wrote beside its database', demoFilePath(DEMO_DATABASE))
    .option('--faults <file>', 'JSON fault profile (see src/simulator: FaultProfile)')
    .option('--rate-limit <perMinute>', 'enforce a requests-per-minute limit per app (429 past it)')
    .action(async (flags: SimulateFlags, cmd: Command) => {
      // The simulator's key is not a secret (it guards a fake); it still comes from the environment
      // so the same config works against the simulator and the service.
      const apiKey = environment()[SIM_KEY_ENV]?.trim() || SIM_DEFAULT_KEY;
      const given = (flag: string): boolean => cmd.getOptionValueSource(flag) === 'cli';
      const { apps, now, port, database } = plan(flags, given, apiKey);
      let faults: FaultProfile = {};
      if (flags.faults) {
        try {
          faults = JSON.parse(readFileSync(flags.faults, 'utf8')) as FaultProfile;
        } catch (err) {
          throw new ConfigError(`--faults ${flags.faults}: ${(err as Error).message}`);
        }
      }
      const rateLimit = flags.rateLimit ? intArg('--rate-limit', flags.rateLimit, 1) : undefined;
      if (rateLimit !== undefined) faults = { ...faults, rateLimitPerMinute: rateLimit };
      let sim: Simulator;
      try {
        sim = await runSimulatorCli({ port, host: flags.host, apps, faults, now, apiKeyEnv: SIM_KEY_ENV, database, requestsPerMinute: rateLimit ?? 6000 });
      } catch (err) {
        throw bindError(err, port, flags.host);
      }
      const stop = (): void => {
        void sim.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
