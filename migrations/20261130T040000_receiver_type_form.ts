import { sql, type Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * probe70: `calls.receiver_type` is stored as `group` or `user` whatever the case or spaces the
 * service wrote (`GROUP`, ` Group`); it was stored as sent, and what matches `group` exactly (the
 * view group_call_attendance, the report's top groups) left such group calls out. Rows stored
 * before are brought to that form; their payloads keep the value as sent. `trim` and `lower` read
 * the same on SQLite and PostgreSQL for these ASCII values. No down: the value as sent is in the
 * payload, and the form is what every later version stores.
 */
export async function up(db: Db): Promise<void> {
  await sql`update calls set receiver_type = lower(trim(receiver_type))
            where lower(trim(receiver_type)) in ('group', 'user') and receiver_type <> lower(trim(receiver_type))`.execute(db);
}

/** Nothing to undo: the older versions read `group` and `user` as they read the values as sent. */
export async function down(): Promise<void> {
  // The values as sent are in call_payload_rows; no older version needs them back in calls.
}
