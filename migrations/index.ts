import type { Migration } from 'kysely';
import * as initialSchema from './20261122T000000_initial_schema.js';
import * as reporting from './20261122T010000_reporting.js';
import * as leases from './20261122T020000_leases.js';
import * as appTicks from './20261122T030000_app_ticks.js';
import * as listingProof from './20261123T000000_listing_proof.js';
import * as callDetails from './20261123T010000_call_details.js';
import * as runOwner from './20261123T020000_run_owner.js';

/**
 * Every migration, by name (names sort in the order they apply). A static list rather than a folder
 * scan: it works the same from TypeScript sources, from dist/, and under the test runner.
 */
export const migrations: Record<string, Migration> = {
  '20261122T000000_initial_schema': initialSchema,
  '20261122T010000_reporting': reporting,
  '20261122T020000_leases': leases,
  '20261122T030000_app_ticks': appTicks,
  '20261123T000000_listing_proof': listingProof,
  '20261123T010000_call_details': callDetails,
  '20261123T020000_run_owner': runOwner,
};
