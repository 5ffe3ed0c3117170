// Where an attempt goes. A caller's own key has one target for every attempt; a pool (a virtual
// key) has one per member, and a retry may move to another (src/pools/route.ts).
import type { KeyMeta, MemberView } from "../limiter/types";
import type { Authorizer } from "../providers/auth/authorize";
import type { Dialect } from "../providers/dialect";
import type { LimiterCalls } from "./limiter-client";

export interface Target {
  url: URL;
  headers: Headers;
  key: KeyMeta;
  limiter: LimiterCalls;
  /** What its answers mean (a pool's members may speak different dialects); absent: the plan's. */
  dialect?: Dialect;
  /** Its credential, made for each attempt over its URL and body (a SigV4 signature, a minted token). */
  authorizer?: Authorizer;
  /** Its own body for the request (a member of another family serving the same wire shape); absent: the request's. */
  body?: Uint8Array;
  /** Its answer as the caller's SDK reads it (Bedrock's event stream as server-sent events). */
  answer?: (res: Response) => Response;
  /** What its answers are priced as, where not the request's provider and model. */
  priceAs?: { provider: string; model: string };
}

export interface Route {
  /**
   * The member to try now (not `avoid` if another is in, never one in `skip`); else when the first
   * one out comes back; null when `skip` holds every member.
   */
  pick(now: number, avoid?: Target, skip?: ReadonlySet<Target>): Target | { backAt: number } | null;
  /** What a member's limiter said of itself with its answer. */
  heard(t: Target, view: MemberView | undefined, now: number): void;
  /** The member answered, and not to say it is out: its key works (a probe that came back good). */
  answered(t: Target): void;
  /** The member answered that its key cannot be used (hard quota, 401, 403): out for now. */
  out(t: Target, reason: string, now: number): void;
  /** How long a request would wait at the best member but `t`; null: there is none. */
  waitElsewhere(t: Target, now: number): number | null;
  /** The first out's length (POOL_OUT_MS): the member's limiter doubles it per strike. */
  outMs: number;
  /** An error body given back with every member credential, and the account ids that tell members apart, cut out. */
  scrub(body: Uint8Array): Uint8Array;
  /** Names the pool in the error given when no member is in. */
  pool: string;
  /** The member's name (a span's attribute). */
  memberOf?(t: Target): string | undefined;
  /** The member whose answer the caller got, once stamped (the batch stage records what it made there). */
  served?: string;
}
