// A pooled request's members, as the retry loop (proxy/run.ts) sees them: which to try next, by
// what this isolate has heard from each member's limiter (choose.ts). Each member's limiter still
// decides admission itself; this only picks which one to ask.
import type { MemberView } from "../limiter/types";
import type { Route, Target } from "../proxy/target";
import { type Candidate, choose, earliestReturn, outUntil, predictedWait, type Seen } from "./choose";

/** Members this isolate keeps a view of; past it the least recently heard goes. */
const KEPT = 4_096;
/** This isolate's views; the simulator gives each simulated isolate its own. */
const isolateViews = new Map<string, Seen>();

export interface PoolMember {
  name: string;
  target: Target;
  credential: string;
}

/** Masked keys as providers echo them in errors (`sk-abc***...wxyz`): cut out whole. */
const MASKED = /[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g;
/**
 * A member's organization or project as errors name it: OpenAI's "in organization org-..." and
 * `proj_...`, Anthropic's "for your organization (<uuid>)". Either tells members apart.
 */
const ACCOUNT_IDS = /\b(?:org|proj)[-_][A-Za-z0-9_-]{3,}|(?<=organization\W{1,3})[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/gi;

export class PoolRoute implements Route {
  readonly pool: string;
  readonly outMs: number;
  served?: string;
  private members: PoolMember[];
  private random: () => number;
  private views: Map<string, Seen>;

  constructor(pool: string, members: PoolMember[], outMs: number, random: () => number = Math.random, views = isolateViews) {
    this.pool = pool;
    this.members = members;
    this.outMs = outMs;
    this.random = random;
    this.views = views;
  }

  private remember(key: string, seen: Seen): void {
    this.views.delete(key);
    if (this.views.size >= KEPT) this.views.delete(this.views.keys().next().value as string);
    this.views.set(key, seen);
  }

  /** The member named, for the caller's answer and the admin view. */
  memberOf(t: Target): string | undefined {
    return this.members.find((m) => m.target === t)?.name;
  }

  targets(): readonly Target[] {
    return this.members.map((m) => m.target);
  }

  pick(now: number, avoid?: Target, skip?: ReadonlySet<Target>): Target | { backAt: number } | null {
    let list = skip?.size ? this.members.filter((m) => !skip.has(m.target)) : this.members;
    if (list.length === 0) return null;
    if (avoid) {
      const others = list.filter((m) => m.target !== avoid);
      if (others.some((m) => outUntil(this.views.get(m.target.key.key)) <= now)) list = others;
    }
    const candidates: Candidate[] = list.map((m) => ({ seen: this.views.get(m.target.key.key) }));
    const i = choose(candidates, now, this.random);
    if (i === null) return { backAt: earliestReturn(candidates) ?? now + this.outMs };
    const chosen = list[i]!;
    const key = chosen.target.key.key;
    const seen = this.views.get(key);
    if (seen) seen.sent++;
    else this.remember(key, { view: { waitMs: 0 }, at: now, sent: 1 });
    return chosen.target;
  }

  heard(t: Target, view: MemberView | undefined, now: number): void {
    if (view) this.remember(t.key.key, { view, at: now, sent: 0 });
  }

  answered(t: Target): void {
    const seen = this.views.get(t.key.key);
    if (seen?.view.outMs === undefined) return;
    delete seen.view.outMs;
    delete seen.view.outReason;
  }

  out(t: Target, reason: string, now: number): void {
    // The member's limiter knows the real length (it doubles per strike); its next answer says so.
    this.remember(t.key.key, { view: { waitMs: 0, outMs: this.outMs, outReason: reason }, at: now, sent: 0 });
  }

  waitElsewhere(t: Target, now: number): number | null {
    let best: number | null = null;
    for (const m of this.members) {
      if (m.target === t) continue;
      const seen = this.views.get(m.target.key.key);
      if (outUntil(seen) > now) continue;
      const w = predictedWait(seen, now, seen?.view.perMin ?? 600);
      if (best === null || w < best) best = w;
    }
    return best;
  }

  scrub(body: Uint8Array): Uint8Array {
    let text = new TextDecoder().decode(body);
    const before = text;
    for (const m of this.members) if (m.credential.length >= 8) text = text.split(m.credential).join("[redacted]");
    text = text.replace(MASKED, "[redacted]").replace(ACCOUNT_IDS, "[redacted]");
    return text === before ? body : new TextEncoder().encode(text);
  }
}

/** Forgets every view (tests). */
export function forgetViews(): void {
  isolateViews.clear();
}
