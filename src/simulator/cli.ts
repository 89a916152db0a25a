import { startSimulator } from './start-simulator.js';
import type { FaultProfile, SimAppSpec, Simulator } from './types.js';

/**
 * `callsync simulate`: starts the simulator and prints each app's two base URLs (never the key).
 * The caller owns the returned simulator and closes it on shutdown.
 */
export async function runSimulatorCli(opts: { port: number; host: string; apps: SimAppSpec[]; faults: FaultProfile }): Promise<Simulator> {
  const sim = await startSimulator({ apps: opts.apps, faults: opts.faults, port: opts.port, host: opts.host });
  const lines = [`callsync simulator listening on ${sim.url}`];
  for (const app of opts.apps) {
    const { callsBaseUrl, chatBaseUrl } = sim.baseUrls(app.appId);
    lines.push(`  app ${app.appId} (region ${app.region}, ${app.calls} calls)`);
    lines.push(`    calls base: ${callsBaseUrl}`);
    lines.push(`    chat base:  ${chatBaseUrl}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return sim;
}
