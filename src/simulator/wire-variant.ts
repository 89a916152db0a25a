import { hash3, Rng, Salt } from './prng.js';

/**
 * How one call is spelled on the wire. The documentation disagrees with itself (api-facts.md), so a
 * client must accept each of these; the truth is the same whichever spelling is used.
 */
export interface WireVariant {
  participantTotalKey: 'totalDuration' | 'totalDurationInMinutes';
  /** SDK spelling `deviceID` / `hasJoined` instead of `deviceId` / `isJoined`. */
  sdkSpelling: boolean;
  /** deviceId sent as an integer (one schema types it so). */
  deviceIdInteger: boolean;
  /** initiator/receiver as `{uid|guid, name}` objects (SDK) instead of strings (REST example). */
  entityObjects: boolean;
  /** initiator/receiver only under `entities.{initiator,receiver}.entity` (legacy example). */
  legacyEntities: boolean;
  /** Undocumented extra fields: metaData, tags, mid, hasTranscription, x_extra. */
  extraFields: boolean;
  participantMid: boolean;
  /** Legacy participants also carry name and avatar. */
  participantProfile: boolean;
  /** Get Call answers `{"data":[call]}` (legacy spec) instead of `{"data":call}`. */
  legacyEnvelope: boolean;
  /** The List entry has no `participants`: the client must call Get Call. */
  listOmitsParticipants: boolean;
  callMid: string;
}

export function pickVariant(seed: number, index: number): WireVariant {
  const r = new Rng(hash3(seed, index, Salt.variant));
  return {
    participantTotalKey: r.chance(0.55) ? 'totalDuration' : 'totalDurationInMinutes',
    sdkSpelling: r.chance(0.03),
    deviceIdInteger: r.chance(0.02),
    entityObjects: r.chance(0.08),
    legacyEntities: r.chance(0.015),
    extraFields: r.chance(0.6),
    participantMid: r.chance(0.5),
    participantProfile: r.chance(0.05),
    legacyEnvelope: r.chance(0.03),
    listOmitsParticipants: r.chance(0.05),
    callMid: uuidLike(r.hex(32)),
  };
}

export function uuidLike(h: string): string {
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
