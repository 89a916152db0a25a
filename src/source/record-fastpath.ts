import { MAX_MAGNITUDE, MAX_RECORD_DEPTH, MAX_SESSION_ID_LENGTH, type ApiCall, type ApiGroupMember } from './schemas.js';
import { nestedDeeperThan } from './json-limits.js';

/**
 * ApiCallSchema's and ApiGroupMemberSchema's answers for the records the service sends every day,
 * without zod: zod's generic object walk (a payload and an issue list per field, unions tried in
 * turn, wrappers per optional/nullable) cost ~25 µs a call, a third of the CPU of a sync outside
 * SQLite, and ~15 µs a group member.
 *
 * The rule: `fastParseCall` (and `fastParseMember`) returns a value only when every field is in a
 * plain form it checks completely (strings, numbers within range, booleans, null, arrays of such
 * objects), and then it is exactly what the schema's safeParse gives (same values, same key order,
 * the same references for the fields zod passes through). Anything else (numbers sent as strings,
 * 0/1 booleans, a field of a wrong type, a string zod would refuse) gives `undefined`, and the
 * caller asks zod, which converts or explains. So the schemas stay the one definition of what is
 * accepted; test/unit/record-fastpath.equivalence.test.ts checks this module against them, field
 * by field.
 */

/** Returned by the checks below when a value is not in a form this module decides. */
const NO = Symbol('ask zod');
type Maybe<T> = T | typeof NO;
type Rec = Record<string, unknown>;

function isRecord(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `text`: well-formed, without NUL. */
function textOk(v: unknown): v is string {
  return typeof v === 'string' && v.isWellFormed() && !v.includes('\u0000');
}

/** looseNumber on a number (NaN fails both comparisons). */
function numOk(v: unknown): v is number {
  return typeof v === 'number' && v >= -MAX_MAGNITUDE && v <= MAX_MAGNITUDE;
}

function unixSeconds(n: number): number {
  return Math.floor(Math.abs(n) > 1e11 ? n / 1000 : n);
}

/** z.union([text, idNumber]): a number only while JSON.parse kept its digits (a safe integer). */
function textOrFinite(v: unknown): boolean {
  return textOk(v) || Number.isSafeInteger(v);
}

/**
 * Copies the keys of `input` the shape does not name, as zod's catchall does (after the shape's
 * keys, in input order, the values themselves, never "__proto__"). False when one of them is
 * nested deeper than `budget` more levels (see fastParseCall).
 */
function copyExtra(input: Rec, out: Rec, shape: ReadonlySet<string>, budget: number): boolean {
  for (const k in input) {
    if (shape.has(k) || k === '__proto__') continue;
    const v = input[k];
    if (nestedDeeperThan(v, budget)) return false;
    out[k] = v;
  }
  return true;
}

/** A present key whose value is `undefined` (never from JSON.parse) is left to zod. */
function absentOrNo(input: Rec, k: string): boolean {
  return !(k in input);
}

const ENTITY_KEYS = new Set(['uid', 'guid', 'id']);
/** entityRef (optional, nullable): a text, or an object whose uid/guid/id are texts. */
function entityRef(v: unknown, budget: number): Maybe<unknown> {
  if (v === null || textOk(v)) return v;
  if (!isRecord(v)) return NO;
  const out: Rec = {};
  for (const k of ['uid', 'guid', 'id'] as const) {
    const x = v[k];
    if (x === undefined) {
      if (!absentOrNo(v, k)) return NO;
    } else if (textOk(x)) out[k] = x;
    else return NO;
  }
  return copyExtra(v, out, ENTITY_KEYS, budget - 1) ? out : NO;
}

const ENTITY_WRAP_KEYS = new Set(['entity']);
const ENTITIES_KEYS = new Set(['initiator', 'receiver']);
/** The legacy `entities: {initiator: {entity}, receiver: {entity}}` (optional, not nullable). */
function entities(v: unknown, budget: number): Maybe<Rec> {
  if (!isRecord(v)) return NO;
  const out: Rec = {};
  for (const side of ['initiator', 'receiver'] as const) {
    const w = v[side];
    if (w === undefined) {
      if (!absentOrNo(v, side)) return NO;
      continue;
    }
    if (!isRecord(w)) return NO;
    const o: Rec = {};
    const e = w.entity;
    if (e === undefined) {
      if (!absentOrNo(w, 'entity')) return NO;
    } else {
      // entity is entityRef.optional(), not nullable.
      if (e === null) return NO;
      const r = entityRef(e, budget - 2);
      if (r === NO) return NO;
      o.entity = r;
    }
    if (!copyExtra(w, o, ENTITY_WRAP_KEYS, budget - 2)) return NO;
    out[side] = o;
  }
  return copyExtra(v, out, ENTITIES_KEYS, budget - 1) ? out : NO;
}

/**
 * One field's check: how a plain value becomes the parsed one (NO: ask zod). `nullable` says
 * whether null is accepted as null. `budget`: the levels the value may still nest (fastParseCall).
 */
interface Field {
  key: string;
  nullable: boolean;
  parse: (v: unknown, budget: number) => unknown;
  /** Not optional: absent is zod's to report. */
  required?: boolean;
}

const asText = (v: unknown): unknown => (textOk(v) ? v : NO);
const asNum = (v: unknown): unknown => (numOk(v) ? v : NO);
const asBool = (v: unknown): unknown => (typeof v === 'boolean' ? v : NO);
const asSeconds = (v: unknown): unknown => (numOk(v) ? unixSeconds(v) : NO);
const asTextOrFinite = (v: unknown): unknown => (textOrFinite(v) ? v : NO);
const f = (key: string, nullable: boolean, parse: (v: unknown, budget: number) => unknown): Field => ({ key, nullable, parse });

/** Builds the parsed object of a looseObject shape: shape keys in order, then the others. */
function object(input: Rec, fields: readonly Field[], keys: ReadonlySet<string>, budget: number): Maybe<Rec> {
  const out: Rec = {};
  for (const fd of fields) {
    const v = input[fd.key];
    if (v === undefined) {
      if (fd.required || !absentOrNo(input, fd.key)) return NO;
      continue;
    }
    if (v === null) {
      if (!fd.nullable) return NO;
      out[fd.key] = null;
      continue;
    }
    const p = fd.parse(v, budget - 1);
    if (p === NO) return NO;
    out[fd.key] = p;
  }
  return copyExtra(input, out, keys, budget - 1) ? out : NO;
}

function arrayOf(v: unknown, fields: readonly Field[], keys: ReadonlySet<string>, budget: number): unknown {
  if (!Array.isArray(v)) return NO;
  const out: unknown[] = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    if (!isRecord(e)) return NO;
    const o = object(e, fields, keys, budget - 1);
    if (o === NO) return NO;
    out[i] = o;
  }
  return out;
}

const keysOf = (fields: readonly Field[]): ReadonlySet<string> => new Set(fields.map((x) => x.key));

// ApiParticipantSchema, field for field.
const PARTICIPANT: readonly Field[] = [
  f('uid', true, asText),
  f('totalAudioMinutes', false, asNum),
  f('totalVideoMinutes', false, asNum),
  f('totalDurationInMinutes', false, asNum),
  // union([looseNumber, text]): a string may be a number in text, which zod converts.
  f('totalDuration', true, asNum),
  f('deviceId', true, asTextOrFinite),
  f('deviceID', true, asTextOrFinite),
  f('isJoined', true, asBool),
  f('hasJoined', true, asBool),
  f('joinedAt', true, asSeconds),
  f('leftAt', true, asSeconds),
  f('state', true, asText),
];
const PARTICIPANT_KEYS = keysOf(PARTICIPANT);

// ApiRecordingSchema.
const RECORDING: readonly Field[] = [
  f('rid', false, asTextOrFinite),
  f('recording_url', true, asText),
  f('startTime', true, asSeconds),
  f('endTime', true, asSeconds),
  f('duration', true, asNum),
];
const RECORDING_KEYS = keysOf(RECORDING);

// ApiTranscriptionSchema: every field falls back to null in zod; here only plain valid values pass.
const TRANSCRIPTION: readonly Field[] = [
  f('tid', true, asTextOrFinite),
  f('mid', true, asText),
  f('roomName', true, asText),
  f('startTime', true, asSeconds),
  f('endTime', true, asSeconds),
  f('transcriptDate', true, asSeconds),
  f('transcriptUrl', true, asText),
];
const TRANSCRIPTION_KEYS = keysOf(TRANSCRIPTION);

const passThrough = (v: unknown, budget: number): unknown => (nestedDeeperThan(v, budget) ? NO : v);

const asTimestamp = (v: unknown): unknown => {
  if (!numOk(v)) return NO;
  const s = unixSeconds(v);
  return s > 0 ? s : null;
};

// ApiCallSchema, in its key order (the parsed object's key order follows it).
const CALL: readonly Field[] = [
  { ...f('sessionId', false, (v) => (textOk(v) && v.length >= 1 && v.length <= MAX_SESSION_ID_LENGTH ? v : NO)), required: true },
  f('type', true, asText),
  f('mode', true, asText),
  f('receiverType', true, asText),
  f('receiver', true, entityRef),
  f('initiator', true, entityRef),
  f('entities', false, entities),
  f('status', true, asText),
  f('totalAudioMinutes', true, asNum),
  f('totalVideoMinutes', true, asNum),
  f('totalDurationInMinutes', true, asNum),
  // union([text, looseNumber]): text first, so a string stays a string.
  f('totalDuration', true, (v) => (textOk(v) || numOk(v) ? v : NO)),
  f('totalParticipants', true, asNum),
  f('hasRecording', true, asBool),
  f('initiatedAt', true, asTimestamp),
  f('startedAt', true, asTimestamp),
  f('endedAt', true, asTimestamp),
  f('participants', true, (v, b) => arrayOf(v, PARTICIPANT, PARTICIPANT_KEYS, b)),
  f('recordings', true, (v, b) => arrayOf(v, RECORDING, RECORDING_KEYS, b)),
  f('recordingUrl', true, asText),
  f('hasTranscription', true, asBool),
  f('transcriptions', true, (v, b) => arrayOf(v, TRANSCRIPTION, TRANSCRIPTION_KEYS, b)),
  // z.unknown(): passed through as they are (null included).
  f('metaData', true, passThrough),
  f('tags', true, passThrough),
];
const CALL_KEYS = keysOf(CALL);

/**
 * ApiCallSchema.safeParse(raw).data when the record is in a plain form; undefined: ask zod.
 *
 * The schema refuses a parsed object nested deeper than MAX_RECORD_DEPTH (nestedDeeperThan on it).
 * Rather than walk the result again, each value is given the levels left where it sits (its
 * budget: the call has MAX_RECORD_DEPTH, a value inside a container one less than the container):
 * the shapes' own fields are a few levels deep at most, so only the values passed through as they
 * came (unknown keys, metaData, tags) are walked, against their budget. Too deep is zod's to explain.
 */
export function fastParseCall(raw: unknown): ApiCall | undefined {
  if (!isRecord(raw)) return undefined;
  const out = object(raw, CALL, CALL_KEYS, MAX_RECORD_DEPTH);
  return out === NO ? undefined : (out as ApiCall);
}

// ApiGroupMemberSchema, in its key order.
const MEMBER: readonly Field[] = [
  // union([text.min(1), idNumber.transform(String)]): a safe integer is its text.
  { ...f('uid', false, (v) => (textOk(v) && v.length >= 1 ? v : Number.isSafeInteger(v) ? String(v) : NO)), required: true },
  f('name', true, asText),
  f('link', true, asText),
  f('avatar', true, asText),
  // z.unknown(): passed through as it is (null included).
  f('metadata', true, passThrough),
  f('status', true, asText),
  f('role', true, asText),
  f('scope', true, asText),
  f('joinedAt', true, asSeconds),
  f('createdAt', true, asSeconds),
  f('updatedAt', true, asSeconds),
  f('conversationId', true, asText),
];
const MEMBER_KEYS = keysOf(MEMBER);

/**
 * ApiGroupMemberSchema.safeParse(raw).data for a member in a plain form; undefined: ask zod. The
 * same rule as fastParseCall: zod's object walk was most of a quiet nightly run's CPU outside
 * SQLite (every member of every group called in the window, larger groups read twice).
 */
export function fastParseMember(raw: unknown): ApiGroupMember | undefined {
  if (!isRecord(raw)) return undefined;
  const out = object(raw, MEMBER, MEMBER_KEYS, MAX_RECORD_DEPTH);
  return out === NO ? undefined : (out as ApiGroupMember);
}
