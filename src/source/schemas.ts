import { z } from 'zod';
import { nestedDeeperThan } from './json-limits.js';
import { parseTimer } from './timer.js';

/**
 * zod schemas for the service's responses: the single source of the API types. They accept every
 * variant listed in api-facts.md (both envelopes, both participant-minute spellings, SDK spellings,
 * integer or string deviceId, numbers sent as strings, entity objects) and keep unknown fields so
 * the raw payload can be stored. Values that cannot be a faithful number (NaN, 1e309 → Infinity),
 * text with a lone surrogate, and records nested absurdly deep are rejected, never coerced.
 */

declare global {
  interface String {
    /** ES2024 (Node ≥ 20): false when the string holds a lone UTF-16 surrogate. */
    isWellFormed(): boolean;
  }
}

/**
 * Text that can be stored and sent back as it came. JSON can carry a lone surrogate (`"\ud800"`),
 * but SQLite would store U+FFFD instead (the row would not be what was received, and the next run
 * would not find it) and encodeURIComponent throws on it (Get Call could not name the call).
 */
export const text = z
  .string()
  .refine((s) => s.isWellFormed(), 'not well-formed Unicode (it holds a lone surrogate)')
  // PostgreSQL text cannot hold NUL: one such string would fail the whole page's transaction on every run.
  .refine((s) => !s.includes('\u0000'), 'holds a NUL character (U+0000), which a database text column cannot store');

/** A real sessionId is about 70 characters; a longer one could not be sent back in a Get Call path. */
export const MAX_SESSION_ID_LENGTH = 1000;

/** Deepest nesting of a record that is stored; a real call is four levels deep. */
export const MAX_RECORD_DEPTH = 32;
const notTooDeep = [(v: unknown) => !nestedDeeperThan(v, MAX_RECORD_DEPTH), `nested deeper than ${MAX_RECORD_DEPTH} levels`] as const;

const numericString = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'not a number')
  .transform(Number);

/**
 * Larger than any figure a call holds (minutes, counts, unix ms until the year 33658), small enough
 * that sums over a call's participants or recordings, and over a month of calls, stay finite.
 */
export const MAX_MAGNITUDE = 1e15;

/** A finite number, or a string holding one, within ±MAX_MAGNITUDE. */
export const looseNumber = z
  .union([z.number(), numericString], { error: 'not a finite number (nor a string holding one)' })
  .refine(Number.isFinite, 'not a finite number')
  .refine((n) => Math.abs(n) <= MAX_MAGNITUDE, `out of range (beyond ±${MAX_MAGNITUDE})`);

/**
 * Unix seconds; milliseconds (13 digits, as in the Usage Metrics example) are converted. A fraction
 * of a second is cut off, never rounded up: the instant 23:59:59.6 of a month's last day is in that
 * second, and rounded it became 00:00:00 of the next month, its call billed there (probe64 F1).
 */
export const unixSeconds = looseNumber.transform((n) => Math.floor(Math.abs(n) > 1e11 ? n / 1000 : n));

/**
 * An ISO 8601 date-time text, as unix seconds. Not documented for calls (10-digit unix seconds are);
 * a service that sends it for some calls had those calls kept aside for good (a hostile fake).
 */
const isoTime = text
  // A space for the T (SQL's spelling, `2026-11-27 12:34:56`) as well: such calls were kept aside.
  .regex(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/, 'not a time')
  .transform((t) => t.replace(' ', 'T'))
  // Without an offset, UTC (Date.parse would take the machine's zone).
  .transform((t) => Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(t) ? t : `${t}Z`))
  .refine(Number.isFinite, 'not a time')
  // The second the instant is in (see unixSeconds), never the next one.
  .transform((ms) => Math.floor(ms / 1000));

const NOT_A_TIME = 'not a finite number, a string holding one, nor an ISO 8601 time';

/** Unix seconds or ms, a numeric string, or an ISO 8601 time. */
const anyTimestamp = z.union([unixSeconds, isoTime], { error: NOT_A_TIME });

/**
 * A call's time: absent, empty, 0 or negative means the call never got there (a call that was never
 * answered has no start), stored as NULL and never as 1970-01-01.
 */
export const callTimestamp = z
  .union([anyTimestamp, z.literal('').transform(() => 0)], { error: NOT_A_TIME })
  .transform((n) => (n > 0 ? n : null));

export const looseBoolean = z.union([
  z.boolean(),
  z.literal(0).transform(() => false),
  z.literal(1).transform(() => true),
  z.enum(['true', 'false', '0', '1']).transform((s) => s === 'true' || s === '1'),
]);

/**
 * An id (uid, deviceId, rid…) written as a JSON number. Past 2^53 JSON.parse rounds it, so the
 * digits are not the ones the service sent: two devices of one user became one (its minutes
 * counted once) and uids were stored with other digits, ok (probe69). Such a record is not read
 * (kept aside, the run says so) rather than stored under an id the service never gave.
 */
const ID_ERROR = 'neither text nor a whole number below 2^53 (past it JSON.parse rounds the digits, so the id sent is not known)';
export const idNumber = z.number().refine(Number.isSafeInteger, ID_ERROR);

/** `initiator`/`receiver`: a uid/guid string in REST, an object in the SDK; a number is its text (as a participant's uid). */
const entityRef = z.union([
  text,
  idNumber.transform(String),
  z.looseObject({ uid: text.optional(), guid: text.optional(), id: text.optional() }),
]);

export const ApiParticipantSchema = z.looseObject({
  // A participant without uid keeps its minutes: stored with uid '' and flagged (issue 12).
  // A number is taken as its text; null minutes as unknown (as at call level), not as a bad record.
  uid: z.union([text, idNumber.transform(String)], { error: ID_ERROR }).optional().nullable(),
  totalAudioMinutes: looseNumber.optional().nullable(),
  totalVideoMinutes: looseNumber.optional().nullable(),
  totalDurationInMinutes: looseNumber.optional().nullable(),
  // Current examples put the participant's minutes here as a number; tolerate a timer string too.
  totalDuration: z.union([looseNumber, text]).optional().nullable(),
  deviceId: z.union([text, idNumber], { error: ID_ERROR }).optional().nullable(),
  deviceID: z.union([text, idNumber], { error: ID_ERROR }).optional().nullable(),
  // null is unknown, as for the other optional fields (a participant with `isJoined: null` or
  // `state: null` kept its whole call aside, ok: found by a hostile fake).
  isJoined: looseBoolean.optional().nullable(),
  hasJoined: looseBoolean.optional().nullable(),
  joinedAt: anyTimestamp.optional().nullable(),
  leftAt: anyTimestamp.optional().nullable(),
  state: text.optional().nullable(),
});

/** A timer text (`00:02:00`, `2:00`) as minutes: a recording's duration written like the call's timer. */
const timerMinutes = text.transform((t, ctx) => {
  const s = parseTimer(t);
  if (s === null) {
    ctx.issues.push({ code: 'custom', message: 'not a number nor a timer (HH:MM:SS)', input: t });
    return z.NEVER;
  }
  return s / 60;
});

export const ApiRecordingSchema = z.looseObject({
  rid: z.union([text, idNumber]).optional(),
  recording_url: text.optional().nullable(),
  // Unix or ISO, as a call's times: ISO here made the whole answer unusable (probe round 13, L2).
  startTime: anyTimestamp.optional().nullable(),
  endTime: anyTimestamp.optional().nullable(),
  duration: z.union([looseNumber, timerMinutes]).optional().nullable(),
});

/**
 * A time as unix seconds (or ms), or as an ISO 8601 date text; null when it is neither. ISO text
 * is read as a call's times are (isoTime: without an offset, UTC): Date.parse alone takes it in the
 * machine's zone, and transcription times were stored 5.5 hours early on a host in Asia/Kolkata
 * (probe69). Other date texts (which name their zone, as RFC 2822 does) go to Date.parse.
 */
const anyTime = z.union([unixSeconds, isoTime, text.transform((t) => {
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
})]);

/**
 * Transcriptions (api-facts.md): at most the five newest, on calls with hasTranscription. No
 * schema publishes their types (transcriptDate is seen as a date text), so every field falls back
 * to null rather than costing the call its minutes.
 */
export const ApiTranscriptionSchema = z.looseObject({
  tid: z.union([text, idNumber]).optional().nullable().catch(null),
  mid: text.optional().nullable().catch(null),
  roomName: text.optional().nullable().catch(null),
  startTime: anyTime.optional().nullable().catch(null),
  endTime: anyTime.optional().nullable().catch(null),
  transcriptDate: anyTime.optional().nullable().catch(null),
  transcriptUrl: text.optional().nullable().catch(null),
});

type ApiTranscriptionShape = z.infer<typeof ApiTranscriptionSchema>;

export const ApiCallSchema = z.looseObject({
  sessionId: text.min(1).max(MAX_SESSION_ID_LENGTH, `longer than ${MAX_SESSION_ID_LENGTH} characters`),
  // A call without type or status keeps its minutes: stored with NULL and flagged (issue 12).
  type: text.optional().nullable(),
  mode: text.optional().nullable(),
  receiverType: text.optional().nullable(),
  receiver: entityRef.optional().nullable(),
  initiator: entityRef.optional().nullable(),
  // Legacy shape: data.entities.{initiator,receiver}.entity
  entities: z
    .looseObject({
      initiator: z.looseObject({ entity: entityRef.optional() }).optional(),
      receiver: z.looseObject({ entity: entityRef.optional() }).optional(),
    })
    .optional(),
  status: text.optional().nullable(),
  totalAudioMinutes: looseNumber.optional().nullable(),
  totalVideoMinutes: looseNumber.optional().nullable(),
  totalDurationInMinutes: looseNumber.optional().nullable(),
  totalDuration: z.union([text, looseNumber]).optional().nullable(),
  totalParticipants: looseNumber.optional().nullable(),
  hasRecording: looseBoolean.optional().nullable(),
  initiatedAt: callTimestamp.optional().nullable(),
  startedAt: callTimestamp.optional().nullable(),
  endedAt: callTimestamp.optional().nullable(),
  participants: z.array(ApiParticipantSchema).optional().nullable(),
  // One recording as an object instead of an array of one: the same recording (the call was kept aside).
  recordings: z.union([z.array(ApiRecordingSchema), ApiRecordingSchema.transform((r) => [r])]).optional().nullable(),
  recordingUrl: text.optional().nullable(),
  hasTranscription: looseBoolean.optional().nullable(),
  // An element that is not a transcription (null, a number) is dropped alone: a `null` in the array
  // cost every transcription of the call (a hostile fake: 0 of 46 stored). One transcription as an
  // object, as one recording may come: read as dropped, 55 of 55 were lost, ok (session 29's probe).
  transcriptions: z
    .union([
      z.array(ApiTranscriptionSchema.nullable().catch(null)).transform((list) => list.filter((t): t is ApiTranscriptionShape => t !== null)),
      ApiTranscriptionSchema.transform((t) => [t]),
    ])
    .optional()
    .nullable()
    .catch(null),
  metaData: z.unknown().optional(),
  tags: z.unknown().optional(),
}).refine(...notTooDeep);

export type ApiCall = z.infer<typeof ApiCallSchema>;
export type ApiParticipant = z.infer<typeof ApiParticipantSchema>;
export type ApiRecording = z.infer<typeof ApiRecordingSchema>;
export type ApiTranscription = z.infer<typeof ApiTranscriptionSchema>;

const PaginationFieldsSchema = z.looseObject({
  total: looseNumber.optional(),
  count: looseNumber.optional(),
  per_page: looseNumber.optional(),
  current_page: looseNumber.optional(),
  total_pages: looseNumber.optional(),
  perPage: looseNumber.optional(),
  currentPage: looseNumber.optional(),
  totalPages: looseNumber.optional(),
});
/** The pagination fields callsync reads, in the documented spelling. */
export interface Pagination {
  total?: number | undefined;
  count?: number | undefined;
  per_page?: number | undefined;
  current_page?: number | undefined;
  total_pages?: number | undefined;
}

/** An unusable pagination object is treated as absent, never as a failed page. */
const PaginationAt = PaginationFieldsSchema.optional().catch(undefined);

/** List envelope: entries stay `unknown` so one bad record is rejected alone, not the page. */
export const ListEnvelopeSchema = z.looseObject({
  data: z.array(z.unknown()),
  meta: z.looseObject({ pagination: PaginationAt }).optional().catch(undefined),
  pagination: PaginationAt,
});
export type ListEnvelope = z.infer<typeof ListEnvelopeSchema>;

/**
 * A list's pagination wherever the service put it. The documentation shows `meta.pagination` in
 * snake_case; nothing says every deployment or version does, and a total that goes unread leaves the
 * listing without its proof of completeness (a sync that sees no total loses calls to removals it
 * cannot notice). So `meta.pagination` first, then a top-level `pagination`, and per field the
 * documented spelling first, then camelCase.
 */
export function paginationOf(envelope: ListEnvelope): Pagination | undefined {
  const p = envelope.meta?.pagination ?? envelope.pagination;
  if (!p) return undefined;
  return {
    total: p.total,
    count: p.count,
    per_page: p.per_page ?? p.perPage,
    current_page: p.current_page ?? p.currentPage,
    total_pages: p.total_pages ?? p.totalPages,
  };
}

/** Get Call: `{"data": {...}}` now, `{"data": [ {...} ]}` in the legacy spec. */
export const GetCallEnvelopeSchema = z.looseObject({
  data: z.union([z.looseObject({}), z.array(z.unknown()).min(1)]),
});

/**
 * GetCallEnvelopeSchema.safeParse(body).success, without zod's copy of the record (its looseObject
 * copies every key of `data`, ~5 µs a Get, for a result the caller does not read).
 */
export function isGetCallEnvelope(body: unknown): body is { data: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const data: unknown = (body as { data?: unknown }).data;
  if (Array.isArray(data)) return data.length >= 1;
  return typeof data === 'object' && data !== null;
}

/** Short, human reason for a failed parse: the first issue's path and message. */
export function describeZodError(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'invalid';
  const path = first.path.length ? first.path.join('.') : '(record)';
  return `${path}: ${first.message}`.slice(0, 300);
}

/** A group member (api-seed.md §2.1); link, metadata, updatedAt and conversationId may be absent. */
export const ApiGroupMemberSchema = z.looseObject({
  // As for calls: a uid written as a number is its text, times may be ISO 8601 text (such members
  // were kept aside while the run said ok: a hostile fake).
  uid: z.union([text.min(1), idNumber.transform(String)], { error: ID_ERROR }),
  name: text.optional().nullable(),
  link: text.optional().nullable(),
  avatar: text.optional().nullable(),
  metadata: z.unknown().optional(),
  status: text.optional().nullable(),
  role: text.optional().nullable(),
  scope: text.optional().nullable(),
  joinedAt: anyTimestamp.optional().nullable(),
  createdAt: anyTimestamp.optional().nullable(),
  updatedAt: anyTimestamp.optional().nullable(),
  conversationId: text.optional().nullable(),
}).refine(...notTooDeep);
export type ApiGroupMember = z.infer<typeof ApiGroupMemberSchema>;

/** Usage Metrics (api-facts.md): `{"data":{"metrics":{…},"time_range":{…}}}`. */
/** A bound of Usage Metrics' echoed range: the number as sent (s or ms), or ISO text as seconds; else absent. */
const rangeEcho = z.union([looseNumber, isoTime]).optional().catch(undefined);

export const UsageStatsSchema = z.looseObject({
  data: z.looseObject({
    metrics: z.looseObject({
      audio_minutes: looseNumber.optional().nullable(),
      video_minutes: looseNumber.optional().nullable(),
      recorded_minutes: looseNumber.optional().nullable(),
      active_users: looseNumber.optional().nullable(),
      concurrent_users: looseNumber.optional().nullable(),
      // Not documented; read rather than taken as zero usage (a hostile fake: an export said 0 minutes).
      audioMinutes: looseNumber.optional().nullable(),
      videoMinutes: looseNumber.optional().nullable(),
      recordedMinutes: looseNumber.optional().nullable(),
    }),
    // The range the service read, as it echoes it: numbers as sent (s or ms) or ISO text; an echo
    // that is neither is read as none (a warning), not as an unknown answer (its metrics are readable).
    time_range: z.looseObject({ fromDate: rangeEcho, toDate: rangeEcho }).optional().catch(undefined),
  }),
});
export type UsageStats = z.infer<typeof UsageStatsSchema>;
