import type { Kysely } from 'kysely';
import type { CommandSettings } from '../config/command-settings.js';
import { withTolerance } from '../reconcile/reconcile-report.js';
import type { Store } from '../store/connection.js';
import type { Database } from '../store/schema.js';
import { getSetting, TOLERANCE_SETTING } from '../store/settings-repo.js';
import { openForReading, type ReadTarget } from './open-for-reading.js';

/** The tolerance the views apply when the database stores none (call_reconciliation's coalesce). */
const VIEW_DEFAULT_TOLERANCE = 0.01;

export interface ToleranceStore {
  store: Store;
  /** Runs `fn` with the reconciliation figures (relations) at the config's tolerance. */
  atTolerance<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
}

/**
 * Opens a database for a reader whose figures depend on the reconciliation tolerance (export
 * billing's calls_* columns, the report's relations and mismatches), applying the config's
 * `reconcileToleranceMinutes` as `callsync reconcile` does. The figures otherwise followed the
 * tolerance the last sync stored: after a change of the config, reconcile read 18 mismatches and
 * the export and report of the same month 59, same config, exit 0 (probe68 F5). The tolerance is
 * applied in a transaction that is rolled back (withTolerance), and only when it differs from the
 * stored one: otherwise the database is read as before, read-only.
 */
export async function openAtConfiguredTolerance(target: ReadTarget & Pick<CommandSettings, 'settings'>): Promise<ToleranceStore> {
  const wanted = target.settings?.reconcileToleranceMinutes;
  const reader = await openForReading(target);
  let stored: number;
  try {
    stored = Number((await getSetting(reader.db, TOLERANCE_SETTING)) ?? VIEW_DEFAULT_TOLERANCE);
  } catch (err) {
    await reader.close();
    throw err;
  }
  if (wanted === undefined || wanted === stored) return { store: reader, atTolerance: (fn) => fn(reader.db) };
  await reader.close();
  const writer = await openForReading(target, { write: true });
  return { store: writer, atTolerance: (fn) => withTolerance(writer.db, wanted, (trx) => fn(trx)) };
}
