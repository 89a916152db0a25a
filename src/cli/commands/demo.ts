import type { Command } from 'commander';
import { sql } from 'kysely';
import { ConfigError } from '../../config/errors.js';
import { resolveConfig } from '../../config/load.js';
import { startSimulator } from '../../simulator/index.js';
import { maskDatabaseUrl } from '../../store/destinations/index.js';
import { runSync } from '../../sync/run-sync.js';
import { formatAppSummary } from '../app-summary.js';
import { DEMO_DATABASE, DEMO_SIM_PORT, demoSimulatorFor, nextSteps, SIM_DEFAULT_KEY, SIM_KEY_ENV, writeDemoConfig, writeDemoFile } from '../demo-setup.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { openRuntime } from '../runtime.js';
import { databaseOption } from '../shared-options.js';

interface DemoFlags {
  database: string;
  calls: string;
  simulatorPort?: string;
}

function intFlag(flag: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < min || n > max) throw new ConfigError(`${flag} ${JSON.stringify(v)}: expected a whole number from ${min} to ${max}`);
  return n;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('no account needed: start the simulator, sync it into ./data/demo.db, show what was synced, leave a callsync.config.json for the other commands')
    .addOption(databaseOption('database file').default(DEMO_DATABASE))
    .option('--calls <n>', 'calls in the main demo app (the first run only: later runs reuse the recorded simulator)', '4000')
    .option('--simulator-port <n>', `port the written config expects \`callsync simulate --demo\` on (default ${DEMO_SIM_PORT})`)
    .action(async (flags: DemoFlags) => {
      const calls = intFlag('--calls', flags.calls, 1, 10_000_000);
      const port = flags.simulatorPort === undefined ? undefined : intFlag('--simulator-port', flags.simulatorPort, 1, 65_535);
      // Same database → same simulator (its clock, apps and seeds): the second run is incremental
      // and makes no Get Call, and `simulate --demo` can serve exactly these calls later.
      const { demo, reused, path: demoFile } = demoSimulatorFor(flags.database, calls, port);
      const sim = await startSimulator({
        apps: demo.apps.map((a) => ({ ...a, apiKey: SIM_DEFAULT_KEY })),
        port: 0,
        now: demo.now,
      });
      // The demo's own environment: the simulator's key, and nothing of the caller's (no
      // CALLSYNC_DATABASE moves the demo's database elsewhere).
      const env = { [SIM_KEY_ENV]: SIM_DEFAULT_KEY };
      const settings = resolveConfig(
        {
          database: flags.database,
          apps: demo.apps.map((a) => ({ appId: a.appId, region: a.region, apiKeyEnv: SIM_KEY_ENV, ...sim.baseUrls(a.appId), requestsPerMinute: 60_000 })),
        },
        env,
        'demo',
      );
      const rt = await openRuntime({ settings, env });
      try {
        writeDemoFile(demoFile, demo);
        const clock = new Date(demo.now * 1000).toISOString();
        console.log(`callsync demo: simulator on ${sim.url} (its calls end at ${clock}), database ${maskDatabaseUrl(settings.database)}`);
        if (reused) console.log(`(the simulator recorded in ${demoFile} by the first run: delete it and the database for a fresh demo)`);
        console.log('');
        const summary = await runSync({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings);
        for (const r of summary.results) console.log(formatAppSummary(r));
        const totals = await sql<{ app_id: string; type: string; calls: number; participants: number; user_minutes: number; recordings: number }>`
          select c.app_id, c.type, count(*) as calls,
                 coalesce(sum(p.n), 0) as participants,
                 round(coalesce(sum(p.minutes), 0), 1) as user_minutes,
                 coalesce(sum(r.n), 0) as recordings
          from calls c
          left join (select call_id, count(*) as n, sum(total_duration_minutes) as minutes
                     from call_participant_rows group by call_id) p
            on p.call_id = c.call_id
          left join (select app_id, session_id, count(*) as n from call_recordings group by app_id, session_id) r
            on r.app_id = c.app_id and r.session_id = c.session_id
          group by c.app_id, c.type order by c.app_id, c.type`.execute(rt.store.db);
        console.log('\nWhat is in the database now:');
        console.table(totals.rows.map((row) => ({ ...row, app_id: sanitizeForTerminal(row.app_id, { singleLine: true }), type: sanitizeForTerminal(row.type, { singleLine: true }) })));
        const config = writeDemoConfig(demo, demoFile);
        console.log(
          [
            '',
            summary.results.every((r) => r.mode === 'incremental')
              ? 'This was an incremental run: only new or changed calls cost requests.'
              : 'Run `npm start` again: the second run is incremental, asking Get Call only for the few calls whose details may still change.',
            config.line,
            '',
            ...nextSteps(demo, demoFile, config.written),
          ].join('\n'),
        );
        process.exitCode = summary.ok ? EXIT.OK : EXIT.SYNC_FAILED;
      } finally {
        await rt.close();
        await sim.close();
      }
    });
}
