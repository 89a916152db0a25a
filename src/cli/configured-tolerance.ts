import type { Kysely } from 'kysely';
import type { CommandSettings } from '../config/command-settings.js';
import { CallsyncError } from '../config/errors.js';
import { withTolerance } from '../reconcile/reconcile-report.js';
import type { Store } from '../store/connection.js';
import { errorMessage } from '../store/destinations/contract.js';
import { mapDatabaseError } from '../store/destinations/index.js';
import type { Database } from '../store/schema.js';
import { storedTolerance } from '../store/settings-repo.js';
import { openForReading, type ReadTarget } from './open-for-reading.js';

export interface ToleranceStore {
  store: Store;
  /** Runs `fn` with the reconciliation figures (relations) at the config's tolerance, when it can be applied. */
  atTolerance<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * After atTolerance: one line saying that the config's tolerance could not be applied (a database
   * this user may only read) and that the relations are at the stored one; undefined otherwise.
   */
  unapplied(): string | undefined;
}

/** An error as one line: our own, a database's as its destination says it, else its message. */
function reasonOf(err: unknown, database: string): string {
  if (err instanceof CallsyncError) return err.message;
  return mapDatabaseError(err, database)?.message ?? errorMessage(err);
}

/**
 * Opens a database for a reader whose figures depend on the reconciliation tolerance (export
 * billing's calls_* columns, the report's relations and mismatches), applying the config's
 * `reconcileToleranceMinutes` as `callsync reconcile` does. The figures otherwise followed the
 * tolerance the last sync stored: after a change of the config, reconcile read 18 mismatches and
 * the export and report of the same month 59, same config, exit 0 (probe68 F5). The tolerance is
 * applied in a transaction that is rolled back (withTolerance), and only when it differs from the
 * stored one: otherwise the database is read as before, read-only.
 *
 * Applying it writes. On a database this user may only read (a read-only role as docs/schema.md
 * sets up, a standby, a SQLite file or copy it may not write) both commands failed, exit 2, where
 * they had worked (probe70). Only the relation counts depend on the tolerance, never the minutes or
 * the flagged calls: the figures are then read at the stored tolerance, and `unapplied` says so.
 */
export async function openAtConfiguredTolerance(target: ReadTarget & Pick<CommandSettings, 'settings'>): Promise<ToleranceStore> {
  const wanted = target.settings?.reconcileToleranceMinutes;
  const reader = await openForReading(target);
  let stored: number;
  try {
    stored = await storedTolerance(reader.db);
  } catch (err) {
    await reader.close();
    throw err;
  }
  if (wanted === undefined || wanted === stored) return { store: reader, atTolerance: (fn) => fn(reader.db), unapplied: () => undefined };
  let why: string | undefined;
  const unapplied = (): string | undefined =>
    why === undefined
      ? undefined
      : `the relations (calls_participant_sum, calls_wall_clock, calls_mismatch; the report's reconciliation and mismatches) are at the tolerance the last sync stored, ${stored} min, not the config's reconcileToleranceMinutes ${wanted}: applying it needs a database this user may write (${why}); minutes and flagged calls do not depend on it, and the next sync stores ${wanted}`;
  let writer: Store;
  try {
    writer = await openForReading(target, { write: true });
  } catch (err) {
    // A SQLite file this user may not write: the reader it already has reads it.
    why = reasonOf(err, target.database);
    return { store: reader, atTolerance: (fn) => fn(reader.db), unapplied };
  }
  await reader.close();
  return {
    store: writer,
    async atTolerance(fn) {
      let applying = true;
      try {
        return await withTolerance(writer.db, wanted, (trx) => {
          applying = false;
          return fn(trx);
        });
      } catch (err) {
        // Only a failure to write the tolerance (a read-only session or role, a lock held past the
        // busy timeout) is read past; one of `fn` is the command's own.
        if (!applying) throw err;
        why ??= reasonOf(err, target.database);
        return fn(writer.db);
      }
    },
    unapplied,
  };
}

/**
 * Opens a database to read at a tolerance the user asked for by name (`reconcile --tolerance`):
 * written in a transaction that is rolled back, so a database this user may only read fails, as
 * asked for something it cannot give.
 */
export async function openAtGivenTolerance(target: ReadTarget, minutes: number): Promise<ToleranceStore> {
  const writer = await openForReading(target, { write: true });
  return { store: writer, atTolerance: (fn) => withTolerance(writer.db, minutes, fn), unapplied: () => undefined };
}
