/**
 * Statuses after which a call no longer changes. The overview lists initiated, ongoing, ended,
 * unanswered, rejected, canceled; the SDK adds busy, cancelled and missed (api-facts.md). Only the
 * statuses known to be live count as non-final: an unknown status is stored as it comes and treated
 * as final, so one odd value cannot make every later run re-fetch that call forever.
 */
const LIVE_STATUSES: ReadonlySet<string> = new Set(['initiated', 'ongoing', 'ringing', 'active']);

export function isFinalStatus(status: string): boolean {
  return !LIVE_STATUSES.has(status.trim().toLowerCase());
}

/**
 * Whether a call is final: by its status, or, when the service sent none, by whether it has ended
 * (a call without status or end time is treated as live: fetched again, until liveMaxDays).
 */
export function isFinalCall(call: { status?: string | null | undefined; endedAt?: number | null | undefined }): boolean {
  if (call.status != null && call.status.trim() !== '') return isFinalStatus(call.status);
  return call.endedAt != null;
}

/**
 * Whether a call went to a group, by its `receiverType` whatever its case or spaces (`GROUP`, as an
 * enum serialised by name writes it): read as exactly `group`, such calls' groups never had their
 * members listed, and the run said ok with every member missing (probe69). Stored as `group`
 * (receiverTypeForm).
 */
export function isGroupReceiver(receiverType: string | null | undefined): boolean {
  return receiverTypeForm(receiverType) === 'group';
}

/**
 * `receiverType` as stored in `calls.receiver_type`: `group` or `user` whatever its case or spaces,
 * any other value as sent (the payload keeps it as sent either way). Stored as sent, `GROUP` calls
 * had their members synced (isGroupReceiver) but were left out by what matches `group` exactly: the
 * report's top groups and the view group_call_attendance, exit 0 (probe70).
 */
export function receiverTypeForm(receiverType: string | null | undefined): string | null {
  if (receiverType == null) return null;
  const form = receiverType.trim().toLowerCase();
  return form === 'group' || form === 'user' ? form : receiverType;
}
