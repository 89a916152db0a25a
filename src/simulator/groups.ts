import { hash3, Rng, Salt } from './prng.js';

/** Users `cometchat-uid-1..200` take part in calls; groups `group-1..40` receive group calls. */
export const USER_POOL_SIZE = 200;
export const GROUP_POOL_SIZE = 40;
/** group-1 and group-2 need several pages at the maximum perPage of 1000 (api-seed.md §8). */
const BIG_GROUP_SIZES: readonly number[] = [2500, 1500];
const SMALL_GROUP_MIN = 3;
const SMALL_GROUP_MAX = 40;
/** Groups deleted since their calls took place: their member list answers ERR_GUID_NOT_FOUND. */
const DELETED_GROUP_COUNT = 2;
/** Steps coprime to USER_POOL_SIZE, so `start + j*step mod 200` yields distinct uids. */
const COPRIME_STEPS: readonly number[] = [7, 11, 13, 17, 19, 21, 23, 27, 29, 31, 33, 37];

export function userUid(n: number): string {
  return `cometchat-uid-${n}`;
}

/** "cometchat-uid-12" → "User 12", "group-3" → "Group 3"; names only decorate the payloads. */
export function displayName(id: string): string {
  const dash = id.lastIndexOf('-');
  const n = id.slice(dash + 1);
  return id.startsWith('group-') ? `Group ${n}` : `User ${n}`;
}

/** Group member, api-seed.md §2.1; optional fields are absent from some entries on purpose. */
export interface GroupMember {
  uid: string;
  name: string;
  link?: string;
  avatar: string;
  metadata?: Record<string, unknown>;
  status: 'available' | 'offline';
  role: string;
  scope: 'participant' | 'moderator' | 'admin';
  joinedAt: number;
  createdAt: number;
  updatedAt?: number;
  conversationId?: string;
}

interface GroupMembers {
  members: GroupMember[];
  json: string[];
}

/** One app's groups, generated lazily and cached (a few thousand members in all). */
export class GroupDirectory {
  private readonly deleted = new Set<number>();
  private readonly cache = new Map<number, GroupMembers>();

  constructor(
    private readonly seed: number,
    private readonly now: number,
  ) {
    const rng = new Rng(hash3(seed, 0, Salt.groupLayout));
    while (this.deleted.size < DELETED_GROUP_COUNT) {
      this.deleted.add(rng.int(BIG_GROUP_SIZES.length + 1, GROUP_POOL_SIZE));
    }
  }

  guidOf(k: number): string {
    return `group-${k}`;
  }

  /** The pool number of a guid, or null when the guid names no group of this app. */
  groupNumber(guid: string): number | null {
    if (!guid.startsWith('group-')) return null;
    const text = guid.slice(6);
    const k = Number(text);
    if (!Number.isInteger(k) || k < 1 || k > GROUP_POOL_SIZE || String(k) !== text) return null;
    return k;
  }

  isDeleted(k: number): boolean {
    return this.deleted.has(k);
  }

  memberCount(k: number): number {
    const big = BIG_GROUP_SIZES[k - 1];
    if (big !== undefined) return big;
    return SMALL_GROUP_MIN + (hash3(this.seed, k, Salt.groupLayout) % (SMALL_GROUP_MAX - SMALL_GROUP_MIN + 1));
  }

  memberUid(k: number, j: number): string {
    if (BIG_GROUP_SIZES[k - 1] !== undefined) return userUid(j + 1);
    const h = hash3(this.seed, k, Salt.groupLayout + 100);
    const start = h % USER_POOL_SIZE;
    const step = COPRIME_STEPS[(h >>> 8) % COPRIME_STEPS.length] ?? 7;
    return userUid(((start + j * step) % USER_POOL_SIZE) + 1);
  }

  /** Current members (callers must check isDeleted first: deleted groups have none). */
  members(k: number): GroupMembers {
    const cached = this.cache.get(k);
    if (cached) return cached;
    const count = this.memberCount(k);
    const members: GroupMember[] = [];
    const guid = this.guidOf(k);
    for (let j = 0; j < count; j++) members.push(this.makeMember(k, j, guid));
    const entry = { members, json: members.map((m) => JSON.stringify(m)) };
    this.cache.set(k, entry);
    return entry;
  }

  private makeMember(k: number, j: number, guid: string): GroupMember {
    const rng = new Rng(hash3(this.seed, k * 100_000 + j, Salt.member));
    const uid = this.memberUid(k, j);
    const createdAt = this.now - rng.int(30, 900) * 86_400 - rng.int(0, 86_399);
    const joinedAt = Math.min(this.now - 3600, createdAt + rng.int(0, 300) * 86_400);
    const member: GroupMember = {
      uid,
      name: displayName(uid),
      avatar: `https://data-us.cometchat.io/assets/images/avatars/${uid}.webp`,
      status: rng.chance(0.4) ? 'available' : 'offline',
      role: 'default',
      scope: j === 0 ? 'admin' : rng.chance(0.1) ? 'moderator' : 'participant',
      joinedAt,
      createdAt,
    };
    if (rng.chance(0.7)) member.link = `https://example.invalid/profiles/${uid}`;
    if (rng.chance(0.5)) member.metadata = { '@private': { email: `${uid}@example.invalid` } };
    if (rng.chance(0.8)) member.updatedAt = joinedAt + rng.int(0, 86_400);
    if (rng.chance(0.7)) member.conversationId = `${guid}_user_${uid}`;
    // Key order as the service sends it (uid, name, link, avatar, metadata, ...), not insertion order.
    const ordered: GroupMember = {
      uid: member.uid,
      name: member.name,
      ...(member.link !== undefined ? { link: member.link } : {}),
      avatar: member.avatar,
      ...(member.metadata !== undefined ? { metadata: member.metadata } : {}),
      status: member.status,
      role: member.role,
      scope: member.scope,
      joinedAt: member.joinedAt,
      createdAt: member.createdAt,
      ...(member.updatedAt !== undefined ? { updatedAt: member.updatedAt } : {}),
      ...(member.conversationId !== undefined ? { conversationId: member.conversationId } : {}),
    };
    return ordered;
  }

  /** `n` distinct participants for a call to group k (from the user pool when the group is gone). */
  pickParticipants(k: number, rng: Rng, n: number): string[] {
    const deleted = this.isDeleted(k);
    // Big groups list uids 1..N in order: drawing from the first 200 keeps callers in the user pool.
    const count = deleted ? USER_POOL_SIZE : Math.min(this.memberCount(k), USER_POOL_SIZE);
    const want = Math.min(n, count);
    const chosen = new Set<number>();
    while (chosen.size < want) chosen.add(rng.int(0, count - 1));
    const uids: string[] = [];
    for (const j of chosen) uids.push(deleted ? userUid(j + 1) : this.memberUid(k, j));
    return uids;
  }
}
