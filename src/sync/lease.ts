import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { CallsyncError } from '../config/errors.js';
import { releaseLease, renewLease, takeOverLease, tryAcquireLease } from '../store/lease-repo.js';
import type { Database, LeasesTable } from '../store/schema.js';
import type { Clock, Timer } from '../config/clock.js';
import { pidAlive } from '../store/process-alive.js';

/** How long a lease lasts without renewal: a crashed holder's lease is taken over after this. */
export const DEFAULT_LEASE_TTL_MS = 60_000;

/** A lease lost to another process while held (LEASE_LOST), or one that kept changing hands while this process tried to take it (LEASE_CONTENDED). */
export class LeaseError extends CallsyncError {
  constructor(code: 'LEASE_LOST' | 'LEASE_CONTENDED', message: string) {
    super(code, message);
    this.name = 'LeaseError';
  }
}

export type LeaseOutcome = { acquired: true; lease: HeldLease } | { acquired: false; heldBy: LeasesTable };

/**
 * A lease held by this process, renewed in the background every third of its TTL. If a renewal
 * finds the lease gone (this process stalled past the TTL and another took over), `lost` aborts,
 * so the holder stops writing.
 */
export class HeldLease {
  readonly #timer: Timer;
  readonly #lost = new AbortController();

  constructor(
    private readonly db: Kysely<Database>,
    readonly name: string,
    readonly holder: string,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {
    // On the injected clock: a test clock advanced past a third of the TTL renews it at that instant.
    this.#timer = clock.setInterval(() => this.#renew(), Math.max(50, Math.floor(ttlMs / 3)));
  }

  /** Aborted when the lease was lost to another process. */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  async #renew(): Promise<void> {
    try {
      if (!(await renewLease(this.db, this.name, this.holder, this.clock.now(), this.ttlMs))) this.#lost.abort(new LeaseError('LEASE_LOST', `lease ${this.name} was taken over by another process`));
    } catch {
      // A busy database delays a renewal; the next tick tries again well before the expiry.
    }
  }

  async release(): Promise<void> {
    this.#timer.cancel();
    await releaseLease(this.db, this.name, this.holder);
  }
}

/**
 * Tries to take the named lease for this process. A lease held by a process of this same machine
 * that no longer exists (killed, crashed) is taken over at once rather than after its expiry.
 */
export async function acquireLease(db: Kysely<Database>, name: string, clock: Clock, ttlMs = DEFAULT_LEASE_TTL_MS): Promise<LeaseOutcome> {
  const me = { holder: randomUUID(), pid: process.pid, host: hostname() };
  // A takeover fails only when the dead holder's lease changed hands meanwhile: look again.
  for (let attempt = 0; attempt < ACQUIRE_ATTEMPTS; attempt++) {
    let row = await tryAcquireLease(db, name, me, clock.now(), ttlMs);
    if (row.holder !== me.holder && row.host === me.host && row.pid !== me.pid && !pidAlive(row.pid)) {
      const taken = await takeOverLease(db, name, row.holder, me, clock.now(), ttlMs);
      if (!taken) continue;
      row = taken;
    }
    if (row.holder !== me.holder) return { acquired: false, heldBy: row };
    return { acquired: true, lease: new HeldLease(db, name, me.holder, clock, ttlMs) };
  }
  throw new LeaseError('LEASE_CONTENDED', `lease ${name} changed hands ${ACQUIRE_ATTEMPTS} times while this process tried to take it over; run again`);
}

const ACQUIRE_ATTEMPTS = 5;

export function describeHolder(l: LeasesTable): string {
  return `process ${l.pid} on ${l.host} holds it until ${new Date(l.expires_at).toISOString()} (renewed while it runs)`;
}
