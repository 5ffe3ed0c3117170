import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import type { Level } from "./log";

/**
 * The limiter's decisions worth a log line, derived from what the Durable Object already sees.
 * Pure: every function takes the time and returns events; nothing here writes anywhere.
 * Fields are numbers, booleans and a few fixed words (reason, class, window, type): nothing a
 * caller sent (no credential, no prompt, no answer) can reach a line.
 */
export type EventName =
  | "ratelimit:hit"
  | "ratelimit:learned"
  | "concurrency:increased"
  | "concurrency:decreased"
  | "gate:closed"
  | "request:retrying"
  | "queue:timeout"
  | "lease:expired"
  | "limiter:restored"
  | "limiter:reset"
  | "slot:granted"
  | "gateway:error";

/** Pressure and trouble are warnings; adaptation is info; the per-request trace is debug. */
export const EVENT_LEVEL: Record<EventName, Level> = {
  "ratelimit:hit": "warn",
  "gate:closed": "warn",
  "queue:timeout": "warn",
  "lease:expired": "warn",
  "gateway:error": "warn",
  "ratelimit:learned": "info",
  "concurrency:increased": "info",
  "concurrency:decreased": "info",
  "request:retrying": "info",
  "limiter:restored": "info",
  "limiter:reset": "info",
  "slot:granted": "debug",
};

export type Field = number | boolean | string | null;
export interface LimiterEvent {
  event: EventName;
  fields: Record<string, Field>;
}

const ev = (event: EventName, fields: Record<string, Field>): LimiterEvent => ({ event, fields });

/** A window's limit as the limiter knows it (null: never reported). */
export interface Windows {
  requests: number | null;
  tokens: number | null;
}

/** Everything one settle showed the object: the outcome and the state around it (limit changes: limitChanged). */
export interface SettleView {
  cls: OutcomeClass;
  status: number;
  attempt: number;
  final: boolean;
  latencyMs: number;
  info: RateLimitInfo;
  gateBefore: number;
  gateAfter: number;
  windowsBefore: Windows;
  windowsAfter: Windows;
  inFlight: number;
  queued: number;
  limit: number;
}

/** A gate pushed out by less than this is the same closure still going: no second line for it. */
export const GATE_EXTEND_MS = 1_000;

const ms = (n: number) => Math.max(0, Math.round(n));
const resetIn = (at: number | null | undefined, now: number) => (typeof at === "number" ? ms(at - now) : null);

export function limitChanged(c: { from: number; to: number; reason: string }, inFlight: number): LimiterEvent {
  return ev(c.to > c.from ? "concurrency:increased" : "concurrency:decreased", { from: c.from, to: c.to, reason: c.reason, inFlight });
}

export function settleEvents(v: SettleView, now: number): LimiterEvent[] {
  const out: LimiterEvent[] = [];
  const { info } = v;
  if (v.cls === "rate_limit")
    out.push(
      ev("ratelimit:hit", {
        status: v.status,
        attempt: v.attempt,
        retryAfterMs: info.retryAfterMs === null ? null : ms(info.retryAfterMs),
        requestsRemaining: info.requests?.remaining ?? null,
        requestsLimit: info.requests?.limit ?? null,
        tokensRemaining: info.tokens?.remaining ?? null,
        tokensLimit: info.tokens?.limit ?? null,
        inFlight: v.inFlight,
        limit: v.limit,
      }),
    );
  for (const window of ["requests", "tokens"] as const) {
    const before = v.windowsBefore[window];
    const after = v.windowsAfter[window];
    if (after === null || after === before) continue;
    const reading = info[window];
    out.push(
      ev("ratelimit:learned", { window, limit: after, previous: before, remaining: reading?.remaining ?? null, resetInMs: resetIn(reading?.resetAt, now) }),
    );
  }
  const wasOpen = v.gateBefore <= now;
  if (v.gateAfter > now && (wasOpen || v.gateAfter - v.gateBefore >= GATE_EXTEND_MS))
    out.push(ev("gate:closed", { forMs: ms(v.gateAfter - now), hintMs: info.retryAfterMs === null ? null : ms(info.retryAfterMs), extended: !wasOpen, status: v.status }));
  // run.ts marks an attempt `final: false` exactly when it has decided to try again.
  if (!v.final && v.cls !== "success")
    out.push(
      ev("request:retrying", { class: v.cls, status: v.status, attempt: v.attempt, nextAttempt: v.attempt + 1, retryAfterMs: info.retryAfterMs === null ? null : ms(info.retryAfterMs), latencyMs: ms(v.latencyMs) }),
    );
  return out;
}

/** A waiter turned away: `expired` in the queue at its deadline, or `refused` at once (gate or quota shut past it). */
export function queueTimeout(t: { how: "expired" | "refused"; waitedMs: number; retryAfterMs: number; queued: number; inFlight: number; limit: number }): LimiterEvent {
  return ev("queue:timeout", { how: t.how, waitedMs: ms(t.waitedMs), retryAfterMs: ms(t.retryAfterMs), queued: t.queued, inFlight: t.inFlight, limit: t.limit });
}

/** The lease id is the Worker's random request id plus the attempt number: no caller data. */
export function leaseExpired(l: { id: string; cost: number; expiresAt: number }, inFlight: number, now: number): LimiterEvent {
  return ev("lease:expired", { leaseId: l.id, cost: l.cost, overdueMs: ms(now - l.expiresAt), inFlight });
}

export function restored(r: { limit: number; phase: string; leases: number; windows: Windows; gateUntil: number; history: number; samples: number }, now: number): LimiterEvent {
  return ev("limiter:restored", {
    limit: r.limit,
    phase: r.phase,
    leases: r.leases,
    requestsLimit: r.windows.requests,
    tokensLimit: r.windows.tokens,
    gateMs: ms(r.gateUntil - now),
    historyEntries: r.history,
    samples: r.samples,
  });
}

export function resetDone(limit: number): LimiterEvent {
  return ev("limiter:reset", { limit });
}

export function slotGranted(g: { waitedMs: number; inFlight: number; limit: number; queued: number }): LimiterEvent {
  return ev("slot:granted", { waitedMs: ms(g.waitedMs), inFlight: g.inFlight, limit: g.limit, queued: g.queued });
}

/** An error the Worker made itself, which no limiter can count (see routes/proxy.ts). */
export function gatewayErrorEvent(type: string, status: number, attempts: number, message?: string): LimiterEvent {
  return ev("gateway:error", { type, status, attempts, ...(message !== undefined && { message: message.slice(0, 500) }) });
}

/** One JSON line: event, level, time and key first, then the figures, then how many lines were dropped before it. */
export function formatLine(e: LimiterEvent, key: string, now: number, suppressed: number): string {
  const line: Record<string, Field> = { event: e.event, level: EVENT_LEVEL[e.event], at: new Date(now).toISOString(), key, ...e.fields };
  if (suppressed > 0) line.suppressed = suppressed;
  return JSON.stringify(line);
}
