import { PostgresAdapter, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

/**
 * Column types: times are 'bigint' (unix milliseconds overflow a 4-byte integer) and minutes
 * 'double precision' (PostgreSQL's 'real' is 4 bytes); SQLite maps both to its INTEGER and REAL.
 *
 * The few SQL fragments that differ between SQLite and PostgreSQL, in one place (frozen with the
 * migrations that use them). Times are unix seconds in both.
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
}

const sqlite: DialectSql = {
  day: (c) => `date(${c}, 'unixepoch')`,
  month: (c) => `strftime('%Y-%m', ${c}, 'unixepoch')`,
  real: (e) => `cast(${e} as real)`,
  idType: 'integer',
  autoIncrement: (c) => c.autoIncrement(),
};

const postgres: DialectSql = {
  day: (c) => `to_char(to_timestamp(${c}) at time zone 'UTC', 'YYYY-MM-DD')`,
  month: (c) => `to_char(to_timestamp(${c}) at time zone 'UTC', 'YYYY-MM')`,
  real: (e) => `cast(${e} as double precision)`,
  idType: 'bigserial',
  autoIncrement: (c) => c,
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function dialectOf(db: Kysely<any>): DialectSql {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgres : sqlite;
}
