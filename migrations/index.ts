import type { Kysely, Migration } from 'kysely';
import type { DialectSql } from './dialect.js';
import * as initialSchema from './20261122T000000_initial_schema.js';
import * as reporting from './20261122T010000_reporting.js';
import * as leases from './20261122T020000_leases.js';
import * as appTicks from './20261122T030000_app_ticks.js';
import * as listingProof from './20261123T000000_listing_proof.js';
import * as callDetails from './20261123T010000_call_details.js';
import * as runOwner from './20261123T020000_run_owner.js';
import * as callPayloads from './20261123T030000_call_payloads.js';
import * as periodColumns from './20261123T040000_period_columns.js';
import * as payloadCallId from './20261126T010000_payload_call_id.js';
import * as reconcileSpeed from './20261126T020000_reconcile_speed.js';
import * as jobEngine from './20261126T030000_job_engine.js';
import * as figuresByCallId from './20261126T090000_figures_by_call_id.js';
import * as participantsByCallId from './20261126T100000_participants_by_call_id.js';
import * as rejectedRegion from './20261129T000000_rejected_region.js';
import * as rejectedUnlisted from './20261130T000000_rejected_unlisted.js';
import * as callTotalFromParts from './20261130T010000_call_total_from_parts.js';
import * as groupFailedRegion from './20261130T020000_group_failed_region.js';
import * as entryBeyondWallClock from './20261130T030000_entry_beyond_wall_clock.js';
import * as receiverTypeForm from './20261130T040000_receiver_type_form.js';
import * as unmeasuredMinutes from './20261130T050000_unmeasured_minutes.js';

/** A migration module: `up` may take the destination's SQL fragments as its second argument. */
interface MigrationModule {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  up(db: Kysely<any>, d: DialectSql): Promise<void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  down?(db: Kysely<any>, d: DialectSql): Promise<void>;
}

/** Every migration, by name (names sort in the order they apply). */
const MODULES: Record<string, MigrationModule> = {
  '20261122T000000_initial_schema': initialSchema,
  '20261122T010000_reporting': reporting,
  '20261122T020000_leases': leases,
  '20261122T030000_app_ticks': appTicks,
  '20261123T000000_listing_proof': listingProof,
  '20261123T010000_call_details': callDetails,
  '20261123T020000_run_owner': runOwner,
  '20261123T030000_call_payloads': callPayloads,
  '20261123T040000_period_columns': periodColumns,
  '20261126T010000_payload_call_id': payloadCallId,
  '20261126T020000_reconcile_speed': reconcileSpeed,
  '20261126T030000_job_engine': jobEngine,
  '20261126T090000_figures_by_call_id': figuresByCallId,
  '20261126T100000_participants_by_call_id': participantsByCallId,
  '20261129T000000_rejected_region': rejectedRegion,
  '20261130T000000_rejected_unlisted': rejectedUnlisted,
  '20261130T010000_call_total_from_parts': callTotalFromParts,
  '20261130T020000_group_failed_region': groupFailedRegion,
  '20261130T030000_entry_beyond_wall_clock': entryBeyondWallClock,
  '20261130T040000_receiver_type_form': receiverTypeForm,
  '20261130T050000_unmeasured_minutes': unmeasuredMinutes,
};

/**
 * Every migration, as Kysely's Migrator runs them, bound to one destination's SQL fragments (the
 * destination the database was opened on hands them in: a migration never guesses its dialect).
 * A static list rather than a folder scan: it works the same from TypeScript sources, from dist/,
 * and under the test runner.
 */
export function migrationsFor(d: DialectSql): Record<string, Migration> {
  const bound: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(MODULES)) {
    const down = m.down;
    bound[name] = { up: (db) => m.up(db, d), ...(down ? { down: (db) => down(db, d) } : {}) };
  }
  return bound;
}
