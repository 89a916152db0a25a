/**
 * The script every team writes first, as the benchmark's floor: list the calls, then for each one,
 * in turn, Get Call, validate and convert it (the project's own parseCall/apiCallToRows, so only
 * the I/O pattern differs), and insert its rows one statement at a time, each committed on its own
 * (no transaction). Same keep-alive Agent and schema as the real sync; SQLite either as the sync
 * opens it (`sqlite: "store"`: WAL, synchronous=NORMAL) or as a first script would (`"defaults"`:
 * a rollback journal and synchronous=FULL, so every insert waits for fsync).
 *
 *   node --import tsx bench/naive-sync.ts '<NaiveArgs as JSON>'    → one JSON line (NaiveResult)
 */
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Agent } from 'undici';
import { bareJsonClient } from './lib.js';
import { openSqliteStore } from '../src/store/connection.js';
import { migrateToLatest } from '../src/store/migrate.js';
import type { Database } from '../src/store/schema.js';
import { apiCallToRows, fingerprint, parseCall } from '../src/transform/call-rows.js';

export interface NaiveArgs {
  callsBaseUrl: string;
  apiKey: string;
  database: string;
  pageSize: number;
  /** Stop after this many calls (the naive loop is slow). */
  maxCalls: number;
  sqlite: 'store' | 'defaults';
}

export interface NaiveResult {
  calls: number;
  requests: number;
  ms: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as NaiveArgs;
const agent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
const client = bareJsonClient(args.callsBaseUrl, args.apiKey, agent);
const { getJson } = client;

const db: Kysely<Database> = args.sqlite === 'store' ? openSqliteStore(args.database).db : new Kysely<Database>({ dialect: new SqliteDialect({ database: new SqliteDatabase(args.database) }) });
await migrateToLatest(db);
const t0 = performance.now();
let calls = 0;
for (let page = 1; calls < args.maxCalls; page++) {
  const body = (await getJson(`/calls?page=${page}&perPage=${args.pageSize}`)) as { data: { sessionId: string }[] };
  for (const entry of body.data) {
    if (calls >= args.maxCalls) break;
    const got = (await getJson(`/calls/${encodeURIComponent(entry.sessionId)}`)) as { data: unknown };
    const raw = Array.isArray(got.data) ? (got.data[0] as unknown) : got.data;
    const parsed = parseCall(raw, entry.sessionId);
    calls++;
    if (!parsed.ok) continue;
    const rows = apiCallToRows(parsed.call, raw, { appId: 'naive', region: 'us', now: Math.floor(Date.now() / 1000), source: 'detail', listFingerprint: fingerprint(entry) });
    await db
      .insertInto('calls')
      .values(rows.call)
      .onConflict((oc) => oc.columns(['app_id', 'session_id']).doUpdateSet((eb) => ({ synced_at: eb.ref('excluded.synced_at') })))
      .execute();
    await db
      .insertInto('call_payload_rows')
      .values((eb) => ({
        call_id: eb.selectFrom('calls').select('call_id').where('app_id', '=', rows.payload.app_id).where('session_id', '=', rows.payload.session_id),
        raw_json: rows.payload.raw_json,
      }))
      .onConflict((oc) => oc.column('call_id').doUpdateSet((eb) => ({ raw_json: eb.ref('excluded.raw_json') })))
      .execute();
    const { call_id: callId } = await db.selectFrom('calls').select('call_id').where('app_id', '=', rows.call.app_id).where('session_id', '=', rows.call.session_id).executeTakeFirstOrThrow();
    await db.deleteFrom('call_participant_rows').where('call_id', '=', callId).execute();
    for (const { app_id: _a, session_id: _s, ...p } of rows.participants) await db.insertInto('call_participant_rows').values({ ...p, call_id: callId }).execute();
    for (const r of rows.recordings) await db.insertInto('call_recordings').values(r).onConflict((oc) => oc.doNothing()).execute();
  }
  if (body.data.length < args.pageSize) break;
}
const ms = performance.now() - t0;
await agent.close();
await db.destroy();
const result: NaiveResult = { calls, requests: client.requests, ms };
process.stdout.write(`${JSON.stringify(result)}\n`);
