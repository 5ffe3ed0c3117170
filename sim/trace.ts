// A per-attempt timeline of a simulated run: when each attempt asked the limiter, was granted,
// was sent, what the provider answered (and the remaining it reported), and when the limiter
// heard it. What `tsx sim/timeline.ts` prints; the measured run's counterpart is bench/real/timeline.ts.
import type { Outcome } from "../src/limiter/state";
import type { AcquireResult } from "../src/limiter/types";

export interface TraceRow {
  /** The caller's request (the number in its prompt) and the attempt. */
  request: number;
  attempt: number;
  lease: string;
  asked: number;
  granted?: number;
  /** In flight (held leases) just after the grant, and the limit it was granted under. */
  inFlight?: number;
  limit?: number;
  sent?: number;
  status?: number;
  /** x-ratelimit-remaining-requests (or Anthropic's) on the answer. */
  remaining?: number | null;
  answered?: number;
  settled?: number;
  /** The limit once the limiter took the answer in. */
  limitAfter?: number;
}

/** The number a simulated request carries at the head of its prompt (sim/clients.ts request). */
export function requestNumber(json: unknown): number {
  const content = (json as { messages?: { content?: string }[] }).messages?.[0]?.content ?? "";
  return Number.parseInt(content, 10);
}

export class Trace {
  readonly rows: TraceRow[] = [];
  private byLease = new Map<string, TraceRow>();
  /** Each request's attempt in progress, for the upstream leg (which knows the body, not the lease). */
  private current = new Map<number, TraceRow>();
  private attempts = new Map<number, number>();

  asked(request: number, lease: string, now: number): void {
    const attempt = (this.attempts.get(request) ?? 0) + 1;
    this.attempts.set(request, attempt);
    const row: TraceRow = { request, attempt, lease, asked: now };
    this.rows.push(row);
    this.byLease.set(lease, row);
  }

  granted(lease: string, r: AcquireResult, now: number, inFlight: number): void {
    const row = this.byLease.get(lease);
    if (!row || !r.granted) return;
    Object.assign(row, { granted: now, inFlight, limit: r.limit });
    this.current.set(row.request, row);
  }

  sent(request: number, now: number): void {
    const row = this.current.get(request);
    if (row) row.sent = now;
  }

  answered(request: number, res: Response, now: number): void {
    const row = this.current.get(request);
    if (!row) return;
    const left = res.headers.get("x-ratelimit-remaining-requests") ?? res.headers.get("anthropic-ratelimit-requests-remaining");
    Object.assign(row, { answered: now, status: res.status, remaining: left === null ? null : Number(left) });
  }

  settled(lease: string, _o: Outcome, now: number, limit: number): void {
    const row = this.byLease.get(lease);
    if (row) Object.assign(row, { settled: now, limitAfter: limit });
  }

  /** The attempts granted (or asked, if never granted) before `untilMs` (from `start`), one line each, times in ms from the start. */
  table(start: number, untilMs: number): string {
    const t = (x: number | undefined) => (x === undefined ? "" : String(Math.round(x - start)));
    const head = "| request | attempt | asked | granted | in flight / limit | sent | answered | status | remaining | limit after |";
    const lines = this.rows
      .filter((r) => (r.granted ?? r.asked) - start < untilMs)
      .sort((a, b) => (a.granted ?? Infinity) - (b.granted ?? Infinity) || a.asked - b.asked)
      .map((r) => `| ${r.request} | ${r.attempt} | ${t(r.asked)} | ${t(r.granted)} | ${r.inFlight ?? ""} / ${r.limit ?? ""} | ${t(r.sent)} | ${t(r.answered)} | ${r.status ?? ""} | ${r.remaining ?? ""} | ${r.limitAfter ?? ""} |`);
    return [head, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", ...lines].join("\n");
  }
}
