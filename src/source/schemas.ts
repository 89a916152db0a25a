import { z } from 'zod';

/**
 * zod schemas for the service's responses: the single source of the API types. They accept every
 * variant listed in api-facts.md (both envelopes, both participant-minute spellings, SDK spellings,
 * integer or string deviceId, numbers sent as strings, entity objects) and keep unknown fields so
 * the raw payload can be stored. Values that cannot be a faithful number (NaN, 1e309 → Infinity)
 * are rejected, never coerced.
 */

const numericString = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'not a number')
  .transform(Number);

/** A finite number, or a string holding one. */
export const looseNumber = z.union([z.number(), numericString]).refine(Number.isFinite, 'not a finite number');

/** Unix seconds; milliseconds (13 digits, as in the Usage Metrics example) are converted. */
export const unixSeconds = looseNumber.transform((n) => Math.round(Math.abs(n) > 1e11 ? n / 1000 : n));

export const looseBoolean = z.union([
  z.boolean(),
  z.literal(0).transform(() => false),
  z.literal(1).transform(() => true),
  z.enum(['true', 'false', '0', '1']).transform((s) => s === 'true' || s === '1'),
]);

/** `initiator`/`receiver`: a uid/guid string in REST, an object in the SDK. */
const entityRef = z.union([
  z.string(),
  z.looseObject({ uid: z.string().optional(), guid: z.string().optional(), id: z.string().optional() }),
]);

export const ApiParticipantSchema = z.looseObject({
  uid: z.string().min(1),
  totalAudioMinutes: looseNumber.optional(),
  totalVideoMinutes: looseNumber.optional(),
  totalDurationInMinutes: looseNumber.optional(),
  // Current examples put the participant's minutes here as a number; tolerate a timer string too.
  totalDuration: z.union([looseNumber, z.string()]).optional(),
  deviceId: z.union([z.string(), z.number()]).optional().nullable(),
  deviceID: z.union([z.string(), z.number()]).optional().nullable(),
  isJoined: looseBoolean.optional(),
  hasJoined: looseBoolean.optional(),
  joinedAt: unixSeconds.optional().nullable(),
  leftAt: unixSeconds.optional().nullable(),
  state: z.string().optional(),
});

export const ApiRecordingSchema = z.looseObject({
  rid: z.union([z.string(), z.number()]).optional(),
  recording_url: z.string().optional().nullable(),
  startTime: unixSeconds.optional().nullable(),
  endTime: unixSeconds.optional().nullable(),
  duration: looseNumber.optional().nullable(),
});

export const ApiCallSchema = z.looseObject({
  sessionId: z.string().min(1),
  type: z.string(),
  mode: z.string().optional().nullable(),
  receiverType: z.string().optional().nullable(),
  receiver: entityRef.optional().nullable(),
  initiator: entityRef.optional().nullable(),
  // Legacy shape: data.entities.{initiator,receiver}.entity
  entities: z
    .looseObject({
      initiator: z.looseObject({ entity: entityRef.optional() }).optional(),
      receiver: z.looseObject({ entity: entityRef.optional() }).optional(),
    })
    .optional(),
  status: z.string().min(1),
  totalAudioMinutes: looseNumber.optional().nullable(),
  totalVideoMinutes: looseNumber.optional().nullable(),
  totalDurationInMinutes: looseNumber.optional().nullable(),
  totalDuration: z.union([z.string(), looseNumber]).optional().nullable(),
  totalParticipants: looseNumber.optional().nullable(),
  hasRecording: looseBoolean.optional().nullable(),
  initiatedAt: unixSeconds.optional().nullable(),
  startedAt: unixSeconds.optional().nullable(),
  endedAt: unixSeconds.optional().nullable(),
  participants: z.array(ApiParticipantSchema).optional().nullable(),
  recordings: z.array(ApiRecordingSchema).optional().nullable(),
  recordingUrl: z.string().optional().nullable(),
});

export type ApiCall = z.infer<typeof ApiCallSchema>;
export type ApiParticipant = z.infer<typeof ApiParticipantSchema>;
export type ApiRecording = z.infer<typeof ApiRecordingSchema>;

export const PaginationSchema = z.looseObject({
  total: looseNumber.optional(),
  count: looseNumber.optional(),
  per_page: looseNumber.optional(),
  current_page: looseNumber.optional(),
  total_pages: looseNumber.optional(),
});
export type Pagination = z.infer<typeof PaginationSchema>;

/** List envelope: entries stay `unknown` so one bad record is rejected alone, not the page. */
export const ListEnvelopeSchema = z.looseObject({
  data: z.array(z.unknown()),
  meta: z.looseObject({ pagination: PaginationSchema.optional().catch(undefined) }).optional().catch(undefined),
});

/** Get Call: `{"data": {...}}` now, `{"data": [ {...} ]}` in the legacy spec. */
export const GetCallEnvelopeSchema = z.looseObject({
  data: z.union([z.looseObject({}), z.array(z.unknown()).min(1)]),
});

/** Short, human reason for a failed parse: the first issue's path and message. */
export function describeZodError(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return 'invalid';
  const path = first.path.length ? first.path.join('.') : '(record)';
  return `${path}: ${first.message}`.slice(0, 300);
}

/** A group member (api-seed.md §2.1); link, metadata, updatedAt and conversationId may be absent. */
export const ApiGroupMemberSchema = z.looseObject({
  uid: z.string().min(1),
  name: z.string().optional().nullable(),
  link: z.string().optional().nullable(),
  avatar: z.string().optional().nullable(),
  metadata: z.unknown().optional(),
  status: z.string().optional().nullable(),
  role: z.string().optional().nullable(),
  scope: z.string().optional().nullable(),
  joinedAt: unixSeconds.optional().nullable(),
  createdAt: unixSeconds.optional().nullable(),
  updatedAt: unixSeconds.optional().nullable(),
  conversationId: z.string().optional().nullable(),
});
export type ApiGroupMember = z.infer<typeof ApiGroupMemberSchema>;

/** Usage Metrics (api-facts.md): `{"data":{"metrics":{…},"time_range":{…}}}`. */
export const UsageStatsSchema = z.looseObject({
  data: z.looseObject({
    metrics: z.looseObject({
      audio_minutes: looseNumber.optional().nullable(),
      video_minutes: looseNumber.optional().nullable(),
      recorded_minutes: looseNumber.optional().nullable(),
      active_users: looseNumber.optional().nullable(),
      concurrent_users: looseNumber.optional().nullable(),
    }),
    time_range: z.looseObject({ fromDate: looseNumber.optional(), toDate: looseNumber.optional() }).optional(),
  }),
});
export type UsageStats = z.infer<typeof UsageStatsSchema>;
