import { sql } from 'kysely';
import { compiledOnce, MAX_IDS, run, statementSizes, type Db } from './compiled-statements.js';
import { destinationOf } from './destinations/index.js';
import type { CallFigureRowsTable } from './schema.js';

/**
 * `call_figure_rows` is the stored copy of the view `call_figures` (per call, what reconcile and
 * billing read, as `call_reconciliation` computes it) that those two commands read. Every store
 * function that writes `calls` refreshes it here for the calls it wrote, in its own transaction,
 * once per batch: before migration 20261126T090000 a trigger did it per written row, which cost a
 * sync some 40–100 µs per call. A write to `calls` that does not come through the store leaves
 * the copy behind until the call is written again (the view itself is always current).
 */

/** The copy's columns: the view's, but the text key session_id (call_id stands for it). */
const COLUMNS = [
  'app_id', 'region', 'type', 'started_at', 'is_final', 'relation', 'flagged', 'issue_bits',
  'participant_audio_minutes', 'participant_video_minutes', 'participant_total_minutes',
  'call_audio_minutes', 'call_video_minutes', 'call_total_minutes', 'recording_minutes', 'mismatch_size', 'call_id',
] as const satisfies readonly (keyof CallFigureRowsTable)[];
const everyColumn: Exclude<keyof CallFigureRowsTable, (typeof COLUMNS)[number]> extends never ? true : never = true;
void everyColumn;


/**
 * Makes the stored figures of these calls of `appId` what the view says now: one delete and one
 * insert from the view (per statement size on SQLite; the view's text stays the one definition of
 * the checks). Keys of calls not stored are ignored.
 */
export async function refreshCallFigures(trx: Db, appId: string, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  // PostgreSQL: the same two statements inside a function of the migration, which plans them once
  // per session; sent as they are, they were planned again for every batch (~25 ms each).
  if (destinationOf(trx).name === 'postgres') {
    await sql`select call_figures_refresh(${appId}, ${[...sessionIds]})`.execute(trx);
    return;
  }
  let at = 0;
  for (const n of statementSizes(sessionIds.length, MAX_IDS)) {
    const params: unknown[] = [appId];
    for (let i = at; i < at + n; i++) params.push(sessionIds[i]);
    at += n;
    const keys = new Array<string>(n).fill('');
    const del = compiledOnce(trx, `figures-delete:${n}`, n + 1, () =>
      trx
        .deleteFrom('call_figure_rows')
        .where('call_id', 'in', (eb) => eb.selectFrom('calls').select('call_id').where('app_id', '=', '').where('session_id', 'in', keys))
        .compile(),
    );
    const ins = compiledOnce(trx, `figures-insert:${n}`, n + 1, () =>
      trx
        .insertInto('call_figure_rows')
        .columns([...COLUMNS])
        .expression((eb) => eb.selectFrom('call_figures').select([...COLUMNS]).where('app_id', '=', '').where('session_id', 'in', keys))
        .compile(),
    );
    await run(trx, del, params);
    await run(trx, ins, params);
  }
}
