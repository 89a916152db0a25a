import type { NewRejectedRow } from '../store/schema.js';
import { fingerprintJson } from './call-rows.js';

/** Characters of a rejected record's payload kept in rejected_records (its fingerprint is of the whole). */
const MAX_REJECTED_PAYLOAD = 1_000_000;

/** Who files a rejected record: every row carries all of it. */
export interface RejectFiler {
  appId: string;
  region: string;
  runId: string;
  /** Unix seconds. */
  now: number;
}

/**
 * A record that could not be parsed, as rejected_records keeps it: its JSON text (capped), the
 * fingerprint that tells the same record filed again, and who filed it. One builder for every
 * endpoint: built by hand in three places, one of them (verify's repair) left the region out.
 */
export function rejectedRow(by: RejectFiler, endpoint: string, key: string, reason: string, raw: unknown): NewRejectedRow {
  // fingerprint(raw) would serialise the record a second time.
  const json = JSON.stringify(raw) ?? 'undefined';
  return {
    app_id: by.appId, endpoint, record_key: key, reason, payload: json.slice(0, MAX_REJECTED_PAYLOAD), fingerprint: fingerprintJson(json),
    run_id: by.runId, region: by.region, created_at: by.now,
  };
}
