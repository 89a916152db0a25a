import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { runSimulatorCli, type FaultProfile, type SimAppSpec } from '../../simulator/index.js';

interface SimulateFlags {
  port: string;
  host: string;
  apps: string;
  calls: string;
  seed: string;
  faults?: string;
  rateLimit?: string;
}

function intArg(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${flag} ${JSON.stringify(v)}: expected a whole number ≥ ${min}`);
  return n;
}

export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description('run the bundled simulator of the service (for demos, tests and benchmarks)')
    .option('--port <n>', 'port (0 = any free port)', '4500')
    .option('--host <h>', 'interface to listen on', '127.0.0.1')
    .option('--apps <list>', 'comma-separated appId:region pairs', 'sim-app:us')
    .option('--calls <n>', 'calls per app', '10000')
    .option('--seed <n>', 'data seed', '1')
    .option('--faults <file>', 'JSON fault profile (see src/simulator: FaultProfile)')
    .option('--rate-limit <perMinute>', 'enforce a requests-per-minute limit per app (429 past it)')
    .action(async (flags: SimulateFlags) => {
      const calls = intArg('--calls', flags.calls, 0);
      const seed = intArg('--seed', flags.seed, 0);
      // The simulator's key is not a secret (it guards a fake); it still comes from the environment
      // so the same config works against the simulator and the service.
      const apiKey = process.env.CALLSYNC_SIM_API_KEY ?? 'simulator-key';
      const apps: SimAppSpec[] = flags.apps.split(',').map((pair) => {
        const [appId, region] = pair.trim().split(':');
        if (!appId || (region !== 'us' && region !== 'eu' && region !== 'in')) {
          throw new ConfigError(`--apps ${JSON.stringify(pair)}: expected appId:region with region us, eu or in`);
        }
        return { appId, region, apiKey, calls, seed };
      });
      let faults: FaultProfile = {};
      if (flags.faults) {
        try {
          faults = JSON.parse(readFileSync(flags.faults, 'utf8')) as FaultProfile;
        } catch (err) {
          throw new ConfigError(`--faults ${flags.faults}: ${(err as Error).message}`);
        }
      }
      if (flags.rateLimit) faults = { ...faults, rateLimitPerMinute: intArg('--rate-limit', flags.rateLimit, 1) };
      const sim = await runSimulatorCli({ port: intArg('--port', flags.port, 0), host: flags.host, apps, faults });
      const stop = (): void => {
        void sim.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
