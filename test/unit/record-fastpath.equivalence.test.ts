import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fastParseCall, fastParseMember } from '../../src/source/record-fastpath.js';
import { ApiCallSchema, ApiGroupMemberSchema, ApiParticipantSchema, ApiRecordingSchema, ApiTranscriptionSchema, GetCallEnvelopeSchema, isGetCallEnvelope } from '../../src/source/schemas.js';
import { parseCall } from '../../src/transform/call-rows.js';

/**
 * fastParseCall must answer exactly as ApiCallSchema does whenever it answers at all: same values,
 * same key order, and never a record zod refuses. Each field of the call, of a participant, of a
 * recording, of a transcription and of the entity shapes is set in turn to every awkward value,
 * then random combinations are tried.
 */

const published = (JSON.parse(readFileSync(new URL('../fixtures/published-call.json', import.meta.url), 'utf8')) as { data: Record<string, unknown> }).data;

/** Every optional part present, in plain forms the fast path takes. */
const rich: Record<string, unknown> = {
  ...published,
  initiator: { uid: 'u-1', name: 'Ann' },
  receiver: { guid: 'g-1', id: 'x', extra: [1, { a: 2 }] },
  entities: { initiator: { entity: { uid: 'u-1' }, more: 1 }, receiver: { entity: 'g-1' }, other: null },
  hasRecording: true,
  recordings: [{ rid: 'r1', recording_url: 'https://x/r1.mp4', startTime: 1692368127, endTime: 1692368146000, duration: 0.3, codec: 'h264' }],
  recordingUrl: 'https://x/one.mp4',
  hasTranscription: true,
  transcriptions: [{ tid: 5, mid: 'm', roomName: 'room', startTime: 1692368127, endTime: null, transcriptDate: 1692368146000, transcriptUrl: 'https://x/t.txt', lang: 'en' }],
  metaData: { a: [1, 2, { b: null }] },
  tags: null,
  x_extra: { a: { b: { c: [1, 2] } } },
  participants: [
    { uid: null, totalAudioMinutes: -0, totalVideoMinutes: 1e15, totalDurationInMinutes: 0.5, deviceID: 7, hasJoined: false, joinedAt: null, leftAt: 1692368144000, name: 'x' },
    ...(published.participants as unknown[]),
  ],
};

function deep(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { v };
  return v;
}

const ABSENT = Symbol('absent');
const VALUES: unknown[] = [
  ABSENT, undefined, null, 0, -0, 1, 2.5, -3, 1e11, 1e11 + 1, 1_692_368_127_000, 1e15, -1e15, 1e15 + 2, 1e16, Infinity, -Infinity, NaN,
  '', 'x', 'ended', '12', ' 12 ', '-1.5e3', '1692368127000', '00:01:02', '2023-08-18T14:15:27Z', '\ud800', 'a\u0000b', 'x'.repeat(1001),
  true, false, 'true', '0', 'false', [], [{}], ['x'], [null], {}, { uid: 'u' }, { uid: 1 }, { uid: null }, { guid: 'g', extra: 1 }, { id: '\ud800' },
  { entity: 'x' }, { entity: null }, { entity: { uid: 'a' } }, { initiator: { entity: { uid: 'a' } } }, { initiator: null }, deep(40),
];

function set(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...obj };
  if (value === ABSENT) delete copy[key];
  else copy[key] = value;
  return copy;
}

/** The keys of every object, in order, by path: key order is part of "the same answer". */
function keyOrder(v: unknown, path = '$', out: string[] = []): string[] {
  if (v !== null && typeof v === 'object') {
    // A plain prototype too: assigning a "__proto__" key would have replaced it.
    if (!Array.isArray(v)) out.push(`${path}:${Object.getPrototypeOf(v) === Object.prototype ? '' : 'prototype replaced '}${Object.keys(v).join(',')}`);
    for (const [k, x] of Object.entries(v)) keyOrder(x, `${path}.${k}`, out);
  }
  return out;
}

/** Seeded draws below `n` (a linear congruential generator: the same records on every run). */
function draws(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

/** A check that `fast` answers as `schema` does whenever it answers; counts the records it decided. */
function agreement(fast: (raw: unknown) => unknown, schema: { safeParse(raw: unknown): { success: true; data: unknown } | { success: false; error: Error } }) {
  const check = (raw: unknown): void => {
    const got = fast(raw);
    if (got === undefined) return;
    check.taken++;
    const zod = schema.safeParse(raw);
    if (!zod.success) throw new Error(`fast path accepted what zod refuses: ${JSON.stringify(raw)?.slice(0, 400)} (${zod.error.message.slice(0, 300)})`);
    expect(got).toStrictEqual(zod.data);
    expect(keyOrder(got)).toEqual(keyOrder(zod.data));
  };
  check.taken = 0;
  return check;
}

const same = agreement(fastParseCall, ApiCallSchema);

type Editor = (base: Record<string, unknown>, key: string, value: unknown) => Record<string, unknown>;
const inArray = (field: string): Editor => (b, k, v) => ({ ...b, [field]: [set((b[field] as Record<string, unknown>[])[0]!, k, v)] });
const places: [string, string[], Editor][] = [
  ['call', [...Object.keys(ApiCallSchema.shape), 'x_extra', 'other'], (b, k, v) => set(b, k, v)],
  // The schemas' own keys: a field added to a schema is tried here at once (and fails until record-fastpath.ts knows it).
  ['participant', [...Object.keys(ApiParticipantSchema.shape), 'mid'], inArray('participants')],
  ['recording', [...Object.keys(ApiRecordingSchema.shape), 'codec'], inArray('recordings')],
  ['transcription', [...Object.keys(ApiTranscriptionSchema.shape), 'lang'], inArray('transcriptions')],
  ['initiator object', ['uid', 'guid', 'id', 'name'], (b, k, v) => ({ ...b, initiator: set(b.initiator as Record<string, unknown>, k, v) })],
  ['entities', ['initiator', 'receiver', 'other'], (b, k, v) => ({ ...b, entities: set(b.entities as Record<string, unknown>, k, v) })],
  ['entity wrapper', ['entity', 'more'], (b, k, v) => ({ ...b, entities: { ...(b.entities as object), initiator: set({ entity: { uid: 'u' }, more: 1 }, k, v) } })],
];

describe('fastParseCall answers as ApiCallSchema does, or not at all', () => {
  it('takes the published example, a record with every optional part, and gives zod\'s result', () => {
    for (const raw of [published, rich]) {
      expect(fastParseCall(raw)).toBeDefined();
      same(raw);
    }
  });

  for (const [where, keys, edit] of places) {
    it(`matches zod for every awkward value of each ${where} field`, () => {
      const before = same.taken;
      for (const base of [published, rich]) {
        for (const key of keys) {
          for (const value of VALUES) {
            let raw: Record<string, unknown>;
            try {
              raw = edit(base, key, value);
            } catch {
              continue; // the published example has no recordings or transcriptions to edit
            }
            same(raw);
          }
        }
      }
      // The fast path must decide many of these itself, or this test proves nothing.
      expect(same.taken - before).toBeGreaterThan(keys.length * 4);
    });
  }

  it('matches zod on "__proto__" keys, non-objects and too deep records', () => {
    for (const raw of [
      JSON.parse(`{"__proto__":{"x":1},"sessionId":"s","participants":[{"__proto__":1,"uid":"u"}],"initiator":{"__proto__":{},"uid":"a"}}`),
      null, 3, 'x', [], [published], { sessionId: 's', x: deep(40) }, { sessionId: 's', participants: [{ uid: 'u', x: deep(30) }] },
    ]) same(raw);
    expect(fastParseCall({ sessionId: 's', x: deep(40) })).toBeUndefined();
  });

  it('matches zod on values nested just within and just beyond the depth limit, wherever they sit', () => {
    const sites: ((v: unknown) => Record<string, unknown>)[] = [
      (v) => ({ ...rich, x_extra: v }),
      (v) => ({ ...rich, metaData: v }),
      (v) => ({ ...rich, tags: v }),
      (v) => ({ ...rich, participants: [{ uid: 'u', mid: v }] }),
      (v) => ({ ...rich, recordings: [{ rid: 'r', codec: v }] }),
      (v) => ({ ...rich, transcriptions: [{ tid: 't', lang: v }] }),
      (v) => ({ ...rich, initiator: { uid: 'u', name: v } }),
      (v) => ({ ...rich, entities: { other: v } }),
      (v) => ({ ...rich, entities: { initiator: { entity: 'u', more: v } } }),
      (v) => ({ ...rich, entities: { receiver: { entity: { guid: 'g', more: v } } } }),
      (v) => ({ ...rich, participants: [{ uid: 'u', mid: [v] }] }),
    ];
    for (const site of sites) {
      const answers = new Set<boolean>();
      for (let n = 24; n <= 34; n++) {
        const raw = site(deep(n));
        same(raw);
        const taken = fastParseCall(raw) !== undefined;
        // Plain values: the fast path leaves to zod exactly the depths zod refuses (no walk costs a call its fast path).
        expect(taken).toBe(ApiCallSchema.safeParse(raw).success);
        answers.add(taken);
      }
      expect([...answers].sort()).toEqual([false, true]);
    }
  });

  it('matches zod on random combinations of awkward values', () => {
    const rnd = draws(12345);
    const before = same.taken;
    for (let i = 0; i < 3000; i++) {
      let raw = rnd(2) ? published : rich;
      for (let m = 1 + rnd(3); m > 0; m--) {
        const [, keys, edit] = places[rnd(places.length)]!;
        // Mostly plain values, so that many records still take the fast path.
        const value = rnd(3) ? VALUES[rnd(VALUES.length)] : VALUES[[2, 3, 6, 11, 19, 20, 30, 31][rnd(8)]!];
        try {
          raw = edit(raw, keys[rnd(keys.length)]!, value);
        } catch {
          // An earlier edit replaced the part this one edits with a non-object: nothing to edit.
        }
      }
      same(raw);
    }
    expect(same.taken - before).toBeGreaterThan(300);
  });

  it('leaves every rejection to zod, reasons unchanged', () => {
    const p = parseCall({ ...published, totalAudioMinutes: Infinity }, 'k');
    expect(p).toEqual({ ok: false, key: published.sessionId, reason: 'totalAudioMinutes: not a finite number (nor a string holding one)' });
  });
});

describe('fastParseMember answers as ApiGroupMemberSchema does, or not at all', () => {
  /** The member of api-seed.md §2.1 with every optional field, and the simulator's plainest. */
  const members: Record<string, unknown>[] = [
    { uid: 'cometchat-uid-1', name: 'Andrew', link: 'https://x/u1', avatar: 'https://x/a.png', metadata: { a: [1, { b: null }] }, status: 'offline', role: 'default', scope: 'admin', joinedAt: 1692368127, createdAt: 1692368127000, updatedAt: 1692368200, conversationId: 'group_g1', extra: { x: 1 } },
    { uid: 'u2', scope: 'participant', joinedAt: 1692368127 },
  ];
  const sameMember = agreement(fastParseMember, ApiGroupMemberSchema);

  it('takes plain members and gives zod\'s result', () => {
    for (const raw of members) {
      expect(fastParseMember(raw)).toBeDefined();
      sameMember(raw);
    }
  });

  it('matches zod for every awkward value of each member field, and on random combinations', () => {
    // The schema's own keys: a field added to it is tried here at once.
    const keys = [...Object.keys(ApiGroupMemberSchema.shape), 'extra', '__proto__'];
    for (const base of members) for (const key of keys) for (const value of VALUES) sameMember(set(base, key, value));
    expect(sameMember.taken).toBeGreaterThan(keys.length * 4);
    const rnd = draws(777);
    const before = sameMember.taken;
    for (let i = 0; i < 2000; i++) {
      let raw = members[rnd(2)]!;
      for (let m = 1 + rnd(3); m > 0; m--) raw = set(raw, keys[rnd(keys.length)]!, rnd(3) ? VALUES[rnd(VALUES.length)] : VALUES[[2, 3, 6, 11, 19, 20, 30, 31][rnd(8)]!]);
      sameMember(raw);
    }
    expect(sameMember.taken - before).toBeGreaterThan(200);
    for (const raw of [null, 3, 'x', [], JSON.parse('{"__proto__":{"x":1},"uid":"u"}'), { uid: 'u', x: deep(40) }, { uid: 'u', metadata: deep(31) }]) sameMember(raw);
  });
});

describe('isGetCallEnvelope', () => {
  it('answers as GetCallEnvelopeSchema does', () => {
    for (const body of [null, 3, 'x', [], [{}], {}, { data: null }, { data: 1 }, { data: 'x' }, { data: [] }, { data: [null] }, { data: [{}] }, { data: {} }, { data: { sessionId: 's' } }, { data: [1, 2] }, { error: {} }, JSON.parse('{"__proto__":{"data":{}}}')]) {
      expect(isGetCallEnvelope(body)).toBe(GetCallEnvelopeSchema.safeParse(body).success);
    }
  });
});
