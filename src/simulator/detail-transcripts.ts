import { hash3, Rng, Salt } from './prng.js';
import type { TruthCall, TruthJson, TruthTranscription } from './truth.js';
import type { WireObject } from './wire-call.js';
import { uuidLike } from './wire-variant.js';

/** The service keeps the newest 5 transcriptions of a call (api-facts.md). */
const MAX_SENT = 5;
/** A call can have more than it sends: up to this many are made. */
const MAX_MADE = 7;
/** One ended call in this many is transcribed. */
const TRANSCRIBED_EVERY = 4;

/** metaData as calls carry it: absent, empty, an object, or an array of objects (the schema allows either). */
const META_VARIANTS: readonly (TruthJson | undefined)[] = [
  undefined,
  [],
  { ticket: 'T-1042', priority: 2, nested: { source: 'web', ids: [1, 'x'] } },
  [{ key: 'campaign', value: 'winter' }, { key: 'agent', value: 'Zoë' }],
];
const TAG_VARIANTS: readonly (TruthJson | undefined)[] = [undefined, [], ['support'], ['vip', 'billing', 'ünïcode tag']];

interface TranscriptVariant {
  transcriptions: TruthTranscription[];
  /** What `hasTranscription` says on the wire: true, false, or nothing. */
  flag: boolean | undefined;
  metaData: TruthJson | undefined;
  tags: TruthJson | undefined;
}

function variantOf(call: TruthCall, seed: number, index: number, appId: string): TranscriptVariant {
  const h = hash3(seed, index, Salt.transcripts);
  const { startedAt, endedAt } = call;
  const transcribed = call.status === 'ended' && startedAt !== null && endedAt !== null && endedAt - startedAt >= 10 && h % TRANSCRIBED_EVERY === 0;
  const transcriptions: TruthTranscription[] = [];
  if (transcribed) {
    const rng = new Rng(h);
    const made = 1 + rng.int(0, MAX_MADE - 1);
    const span = endedAt - startedAt;
    for (let k = 0; k < made; k++) {
      const startTime = startedAt + Math.floor((k * span) / made);
      const endTime = Math.max(startTime + 1, startedAt + Math.floor(((k + 1) * span) / made));
      const tid = uuidLike(rng.hex(32));
      const transcriptDate = new Date(startTime * 1000).toISOString();
      transcriptions.push({
        tid,
        mid: uuidLike(rng.hex(32)),
        roomName: `${call.sessionId}@conference.rtc.cometchat.io`,
        startTime,
        endTime,
        transcriptDate,
        transcriptUrl: `https://transcripts.cometchat.invalid/${appId}/transcript_${transcriptDate}_${tid}.json`,
      });
    }
    transcriptions.sort((a, b) => b.startTime - a.startTime);
    transcriptions.length = Math.min(transcriptions.length, MAX_SENT);
  }
  return {
    transcriptions,
    flag: transcribed ? true : (h >>> 4) % 3 === 0 ? undefined : false,
    metaData: META_VARIANTS[(h >>> 8) % META_VARIANTS.length],
    tags: TAG_VARIANTS[(h >>> 12) % TAG_VARIANTS.length],
  };
}

/** The call with what the transcriptions quirk adds to the truth (absent fields are null / false). */
export function withTranscripts(call: TruthCall, seed: number, index: number, appId: string): TruthCall {
  const v = variantOf(call, seed, index, appId);
  return { ...call, hasTranscription: v.flag === true, transcriptions: v.transcriptions, metaData: v.metaData ?? null, tags: v.tags ?? null };
}

/** Puts the variant's fields on the wire object, replacing what the plain variant put there. */
export function putTranscripts(w: WireObject, call: TruthCall, seed: number, index: number, appId: string): void {
  const v = variantOf(call, seed, index, appId);
  delete w.hasTranscription;
  delete w.metaData;
  delete w.tags;
  if (v.flag !== undefined) w.hasTranscription = v.flag;
  if (v.transcriptions.length > 0) w.transcriptions = v.transcriptions.map((t) => ({ ...t }));
  // Copies: the wire object is serialised and may be changed further; the variants are shared.
  if (v.metaData !== undefined) w.metaData = structuredClone(v.metaData);
  if (v.tags !== undefined) w.tags = structuredClone(v.tags);
}
