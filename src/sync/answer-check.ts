import type { ApiCall } from '../source/schemas.js';
import { distinctParticipantEntries } from '../transform/call-rows.js';
import { isFinalCall } from '../transform/call-status.js';

/** Recordings and transcriptions a call states (the SDK's single `recordingUrl` is one recording). */
export function mediaOf(call: ApiCall): { recordings: number; transcriptions: number } {
  return { recordings: call.recordings?.length ?? (call.recordingUrl ? 1 : 0), transcriptions: call.transcriptions?.length ?? 0 };
}

/**
 * Why Get Call's answer is an older state of the call than its list entry, if it is: the entry
 * already says the call ended, has recordings, or shows participants, recordings or transcriptions
 * the answer lacks. A replica or cache behind Get Call that lags the listing answers like that;
 * stored, the answer sat under the entry's fingerprint and was never asked for again (a hostile
 * fake lost 90 of 120 recordings that way, ok, also after `sync --full`). Such an answer is
 * treated as unusable: the call is kept as listed and asked for again on the next runs.
 */
export function olderThanListed(listed: ApiCall, got: ApiCall): string | undefined {
  if (isFinalCall(listed) && !isFinalCall(got)) return `the list entry says ${listed.status ?? 'ended'}, Get Call ${got.status ?? 'not ended'}`;
  if (listed.endedAt != null && got.endedAt == null) return 'the list entry has endedAt, Get Call has none';
  if (listed.hasRecording === true && got.hasRecording === false) return 'the list entry says hasRecording, Get Call does not';
  const l = mediaOf(listed);
  const g = mediaOf(got);
  if (g.recordings < l.recordings) return `the list entry has ${l.recordings} recording(s), Get Call ${g.recordings}`;
  if (g.transcriptions < l.transcriptions) return `the list entry has ${l.transcriptions} transcription(s), Get Call ${g.transcriptions}`;
  // An entry the list repeats exactly is one participant (see listEntryIsComplete); counted only
  // when the answer has fewer entries than the list, as almost never.
  const gp = got.participants?.length ?? 0;
  if (gp < (listed.participants?.length ?? 0)) {
    const lp = distinctParticipantEntries(listed);
    if (gp < lp) return `the list entry has ${lp} participant(s), Get Call ${gp}`;
  }
  return undefined;
}
