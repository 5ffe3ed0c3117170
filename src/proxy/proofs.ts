/**
 * @module Which caller credentials have proven they may use the identity their path names (the
 * row's `identity` column: Vertex's project), so that their requests share that identity's limiter.
 *
 * A caller's own token rotates (Google's last an hour), and a limiter keyed by a token's hash would
 * start from nothing at every rotation. Keyed by the path's project instead, every token of the
 * project shares one limiter, as its quotas are the project's. But the path names any project: a
 * stranger with a bad token could then queue in, slow, or teach (with its 401s and 403s) the
 * limiter of a project it may not use, and read its state in the answer's headers. So a credential
 * is keyed by the project only once the provider itself has answered it there with a 2xx (Google
 * checks a caller's permission on the project before anything else), and by its own hash until
 * then. A 401 or 403 there takes the proof back (a revoked token, a role removed). Pairs are per
 * provider (another provider of the same row may point elsewhere), kept per isolate for `ttlMs`
 * after the last 2xx (an hour: a token's life), at most `max` (the oldest proven goes first); time
 * is passed in.
 */
import { remember } from "../bounded";

/** How long a 2xx proves a credential for its identity: a Google access token's life. */
export const PROOF_MS = 3_600_000;
/** Pairs held per isolate. */
export const PROOFS_KEPT = 4_096;

export class Proofs {
  readonly #until = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #max: number;

  constructor(ttlMs = PROOF_MS, max = PROOFS_KEPT) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  /** Whether `credentialHash` has been answered with a 2xx by `provider` at `identity` within the proof's life. */
  proven(provider: string, credentialHash: string, identity: string, now: number): boolean {
    const until = this.#until.get(pair(provider, credentialHash, identity));
    return until !== undefined && now < until;
  }

  /** What the provider answered the credential at `identity`: a 2xx proves it (again), a 401 or 403 takes the proof back, anything else says nothing. */
  answered(provider: string, credentialHash: string, identity: string, status: number, now: number): void {
    const id = pair(provider, credentialHash, identity);
    if (status >= 200 && status < 300) remember(this.#until, id, now + this.#ttlMs, this.#max);
    else if (status === 401 || status === 403) this.#until.delete(id);
  }

  /** Pairs held. */
  get size(): number {
    return this.#until.size;
  }
}

const pair = (provider: string, credentialHash: string, identity: string) => `${provider}\n${credentialHash}\n${identity}`;
