import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallRows } from '../../src/store/schema.js';
import { apiCallToRows, distinctParticipantEntries, fingerprint, parseCall } from '../../src/transform/call-rows.js';
import type { ApiCall } from '../../src/source/schemas.js';

/**
 * Property: the normaliser (parseCall, then apiCallToRows) never throws, whatever JSON it is given.
 * It returns rows or a rejection with a reason; rows hold no NaN or Infinity, no text SQLite would
 * alter, and keep the record as received in raw_json.
 */
const ctx = { appId: 'a', region: 'us', now: 1_764_000_000, source: 'detail' as const, listFingerprint: null };
const RUNS = 1500;

/** Any JSON, strings included that hold lone surrogates (stringUnit 'binary'). */
const anyJson = fc.jsonValue({ maxDepth: 5, stringUnit: 'binary' });

/** A value that is often right for a field and otherwise any JSON at all. */
const sometimes = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 12, arbitrary: good }, { weight: 1, arbitrary: anyJson });

const num = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.integer()) },
  { weight: 1, arbitrary: fc.oneof(fc.double().map(String), fc.double(), fc.constantFrom('0.5', ' 2 ', '1e3', '-0', 'NaN', 'Infinity', '', '1e309', Number.MAX_VALUE, -Number.MAX_VALUE, '1.7e308')) },
);
const time = fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: 0, max: 2_000_000_000 }).map((s) => s * 1000), fc.integer().map(String));
const bool = fc.oneof(fc.boolean(), fc.constantFrom(0, 1, 'true', 'false', '0', '1', 'yes'));
const str = fc.string({ unit: 'binary', maxLength: 12 });
const timer = fc.oneof(fc.constantFrom('00:00:19', '1:02:03', '05:07', '-00:00:01', '99:99:99', '', '00:00:19.5'), str);

const participantLike = fc.record(
  {
    uid: sometimes(fc.oneof(fc.constantFrom('u1', 'u2'), str)),
    totalAudioMinutes: sometimes(num), totalVideoMinutes: sometimes(num), totalDurationInMinutes: sometimes(num),
    totalDuration: sometimes(fc.oneof(num, timer)), deviceId: sometimes(fc.oneof(str, fc.integer())), deviceID: sometimes(str),
    isJoined: sometimes(bool), hasJoined: sometimes(bool), joinedAt: sometimes(time), leftAt: sometimes(time), state: sometimes(str),
  },
  { requiredKeys: [] },
);

const callLike = fc
  .record(
    {
      sessionId: sometimes(fc.oneof(fc.constantFrom('v1.us.a.1', 'a/../b?c=%', '..'), str)),
      type: sometimes(fc.constantFrom('audio', 'video')), mode: sometimes(str), receiverType: sometimes(fc.constantFrom('user', 'group')),
      receiver: sometimes(fc.oneof(str, fc.record({ uid: str }), fc.record({ guid: str }))),
      initiator: sometimes(fc.oneof(str, fc.record({ uid: str }))),
      entities: sometimes(fc.record({ initiator: fc.record({ entity: fc.oneof(str, fc.record({ uid: str })) }) }, { requiredKeys: [] })),
      status: sometimes(fc.constantFrom('ended', 'ongoing', 'initiated', 'busy', 'cancelled', 'teleported')),
      totalAudioMinutes: sometimes(num), totalVideoMinutes: sometimes(num), totalDurationInMinutes: sometimes(num),
      totalDuration: sometimes(fc.oneof(timer, num)), totalParticipants: sometimes(num), hasRecording: sometimes(bool),
      initiatedAt: sometimes(time), startedAt: sometimes(time), endedAt: sometimes(time),
      participants: sometimes(fc.array(participantLike, { maxLength: 4 })),
      recordings: sometimes(fc.array(fc.record({ rid: sometimes(fc.oneof(str, fc.integer())), recording_url: sometimes(str), startTime: sometimes(time), endTime: sometimes(time), duration: sometimes(num) }, { requiredKeys: [] }), { maxLength: 3 })),
      recordingUrl: sometimes(str),
    },
    { requiredKeys: ['sessionId', 'type', 'status'] },
  )
  .chain((c) =>
    // Unknown fields, "__proto__" and "constructor" included, added as own data properties.
    fc.dictionary(fc.oneof(str, fc.constantFrom('__proto__', 'constructor', 'toString')), anyJson, { maxKeys: 3 }).map((extra) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of [...Object.entries(extra), ...Object.entries(c)]) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    }),
  );

function checkRows(rows: CallRows, raw: unknown, call: ApiCall): void {
  const values = [rows.call, ...rows.participants, ...rows.recordings].flatMap((r) => Object.values(r));
  for (const v of values) {
    if (typeof v === 'number') expect(Number.isFinite(v), `non-finite ${v}`).toBe(true);
    else if (typeof v === 'string') expect(v.isWellFormed(), `lone surrogate in ${JSON.stringify(v)}`).toBe(true);
    else expect(v === null || v === undefined, `unexpected ${typeof v}`).toBe(true);
  }
  expect(rows.call.session_id).toBe((raw as { sessionId: string }).sessionId);
  expect(JSON.stringify(JSON.parse(rows.payload.raw_json))).toBe(JSON.stringify(raw));
  // Every participant entry, an exact repeat once (one session stated twice: distinctParticipants).
  const listed = (raw as { participants?: unknown }).participants;
  expect(rows.participants).toHaveLength(Array.isArray(listed) ? distinctParticipantEntries(call) : 0);
  expect(rows.call.participant_rows).toBe(rows.participants.length);
  expect([0, 1]).toContain(rows.call.is_final);
}

function normalise(raw: unknown): void {
  const parsed = parseCall(raw, 'fallback-key');
  if (parsed.ok) checkRows(apiCallToRows(parsed.call, raw, ctx), raw, parsed.call);
  else {
    expect(parsed.reason.length).toBeGreaterThan(0);
    expect(parsed.key.length).toBeGreaterThan(0);
    expect(parsed.key.isWellFormed()).toBe(true);
  }
  expect(typeof fingerprint(raw)).toBe('string');
}

describe('the call normaliser never throws', () => {
  it('on any JSON value: rows or a rejection with a reason', () => {
    fc.assert(fc.property(anyJson, normalise), { numRuns: RUNS });
  });

  it('on call-like records with any field wrong, absent, odd or extra', () => {
    let accepted = 0;
    fc.assert(
      fc.property(callLike, (raw) => {
        normalise(raw);
        if (parseCall(raw, 'k').ok) accepted++;
      }),
      { numRuns: RUNS },
    );
    // The generator does reach the accepting paths, not only rejections.
    expect(accepted).toBeGreaterThan(RUNS / 20);
  });

  it('on figures so large that their sums would overflow (rejected, never stored as Infinity)', () => {
    const huge = { sessionId: 'huge', type: 'audio', status: 'ended', participants: [{ uid: 'a', totalAudioMinutes: Number.MAX_VALUE }, { uid: 'b', totalAudioMinutes: Number.MAX_VALUE }] };
    expect(parseCall(huge, 'k')).toMatchObject({ ok: false, key: 'huge' });
    const recs = { sessionId: 'recs', type: 'audio', status: 'ended', recordings: [{ rid: 'r', duration: 1e308 }, { rid: 's', duration: 1e308 }] };
    expect(parseCall(recs, 'k')).toMatchObject({ ok: false, key: 'recs' });
  });

  it('on nesting far deeper than any call (rejected with a reason, not a stack overflow)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { n: deep };
    const raw = { sessionId: 'deep', type: 'audio', status: 'ended', x: deep };
    const parsed = parseCall(raw, 'k');
    expect(parsed).toMatchObject({ ok: false, key: 'deep' });
    if (!parsed.ok) expect(parsed.reason).toMatch(/nested deeper than/);
    expect(parseCall(deep, 'k')).toMatchObject({ ok: false, key: 'k' });
  });
});
