import type { Command } from 'commander';
import { sql } from 'kysely';
import { resolveConfig } from '../../config/load.js';
import { startSimulator } from '../../simulator/index.js';
import { runSync } from '../../sync/run-sync.js';
import { formatAppSummary } from '../app-summary.js';
import { EXIT } from '../exit-codes.js';
import { sanitizeForTerminal } from '../output.js';
import { openRuntime } from '../runtime.js';

const DEMO_KEY_ENV = 'CALLSYNC_DEMO_API_KEY';

interface DemoFlags {
  database: string;
  calls: string;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('no account needed: start the simulator, sync it into ./data/demo.db, show what was synced')
    .option('--database <path>', 'database file', 'data/demo.db')
    .option('--calls <n>', 'calls in the main demo app', '4000')
    .action(async (flags: DemoFlags) => {
      const calls = Math.max(1, Number(flags.calls) || 4000);
      const apiKey = 'demo-key-not-secret';
      const sim = await startSimulator({
        apps: [
          { appId: 'demo-app', region: 'us', apiKey, calls, seed: 7 },
          { appId: 'demo-eu', region: 'eu', apiKey, calls: Math.ceil(calls / 2), seed: 8 },
        ],
        port: 0,
      });
      const env = { [DEMO_KEY_ENV]: apiKey };
      const settings = resolveConfig(
        {
          database: flags.database,
          // The simulator is local: allow it a generous rate so the demo takes seconds.
          apps: ['demo-app', 'demo-eu'].map((appId) => ({
            appId,
            region: appId === 'demo-eu' ? 'eu' : 'us',
            apiKeyEnv: DEMO_KEY_ENV,
            ...sim.baseUrls(appId),
            requestsPerMinute: 60_000,
          })),
        },
        env,
        'demo',
      );
      const rt = await openRuntime(settings);
      try {
        console.log(`callsync demo: simulator on ${sim.url}, database ${settings.database}\n`);
        const summary = await runSync({ db: rt.store.db, dispatcher: rt.dispatcher, clock: rt.clock, log: rt.log }, settings);
        for (const r of summary.results) console.log(formatAppSummary(r));
        const totals = await sql<{ app_id: string; type: string; calls: number; participants: number; user_minutes: number; recordings: number }>`
          select c.app_id, c.type, count(*) as calls,
                 coalesce(sum(p.n), 0) as participants,
                 round(coalesce(sum(p.minutes), 0), 1) as user_minutes,
                 coalesce(sum(r.n), 0) as recordings
          from calls c
          left join (select app_id, session_id, count(*) as n, sum(total_duration_minutes) as minutes
                     from call_participants group by app_id, session_id) p
            on p.app_id = c.app_id and p.session_id = c.session_id
          left join (select app_id, session_id, count(*) as n from call_recordings group by app_id, session_id) r
            on r.app_id = c.app_id and r.session_id = c.session_id
          group by c.app_id, c.type order by c.app_id, c.type`.execute(rt.store.db);
        console.log('\nWhat is in the database now:');
        console.table(totals.rows.map((row) => ({ ...row, app_id: sanitizeForTerminal(row.app_id, { singleLine: true }), type: sanitizeForTerminal(row.type, { singleLine: true }) })));
        console.log(
          [
            '',
            summary.results.every((r) => r.mode === 'incremental')
              ? 'This was an incremental run: only new or changed calls cost requests.'
              : 'Run `npm start` again: the second run is incremental and makes no Get Call request.',
            `Query it with any SQLite client, e.g.:`,
            `  sqlite3 ${settings.database} "select type, status, count(*) from calls group by 1, 2"`,
            `  sqlite3 ${settings.database} "select uid, round(sum(total_duration_minutes), 1) as minutes from call_participants group by uid order by minutes desc limit 10"`,
            'The schema is documented in docs/schema.md.',
          ].join('\n'),
        );
        process.exitCode = summary.ok ? EXIT.OK : EXIT.SYNC_FAILED;
      } finally {
        await rt.close();
        await sim.close();
      }
    });
}
