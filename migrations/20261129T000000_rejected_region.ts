import { sql, type Kysely } from 'kysely';

// Frozen in time: must not import from src/. Kysely<any> is the documented migration signature.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/**
 * The region whose run filed a rejected record. One `sync` names all its apps' runs with one run_id,
 * so the run alone does not tell an appId configured in two regions apart, and the incremental proof
 * counted one region's unreadable entries as held for the other (a call missing, ok). Records filed
 * before: the region of their run when that run synced the app in one region only, else null
 * (counted for no region: a proof short of one only lists again).
 */
export async function up(db: Db): Promise<void> {
  await db.schema.alterTable('rejected_records').addColumn('region', 'text').execute();
  await sql`
    update rejected_records set region = (
      select min(s.region) from sync_runs s where s.run_id = rejected_records.run_id and s.app_id = rejected_records.app_id)
    where (select count(distinct s.region) from sync_runs s where s.run_id = rejected_records.run_id and s.app_id = rejected_records.app_id) = 1`.execute(db);
}

export async function down(db: Db): Promise<void> {
  await db.schema.alterTable('rejected_records').dropColumn('region').execute();
}
