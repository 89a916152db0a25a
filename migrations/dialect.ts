import type { ColumnDefinitionBuilder } from 'kysely';

/**
 * The few SQL fragments that differ between destinations, as the migrations need them. Each
 * destination (src/store/destinations/) provides them, and store/migrate.ts hands them to every
 * migration: the migrations themselves never import from src/, and never guess the dialect.
 *
 * Column types: times are 'bigint' (unix milliseconds overflow a 4-byte integer) and minutes
 * 'double precision' (PostgreSQL's 'real' is 4 bytes); SQLite maps both to its INTEGER and REAL.
 * Times are unix seconds everywhere. A fragment a past migration used must keep its meaning: change
 * one only through a new migration.
 */
export interface DialectSql {
  /** `YYYY-MM-DD` (UTC) of a unix-seconds column. */
  day(col: string): string;
  /** `YYYY-MM` (UTC) of a unix-seconds column. */
  month(col: string): string;
  /** Floating-point division (both operands may be integers). */
  real(expr: string): string;
  /** Type of an auto-incrementing id: SQLite's rowid alias must be spelled exactly INTEGER. */
  idType: 'integer' | 'bigserial';
  autoIncrement(c: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * Several processes write at once and coordinate through advisory locks and the job engine
   * (PostgreSQL), not through lease rows: such a database keeps no `leases` table.
   */
  sharedWriters: boolean;
}
