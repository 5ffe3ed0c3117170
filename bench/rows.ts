// Rows that several scenarios report the same way, each figure beside the direct baseline's.
import { cuts, type Side } from "./context.ts";
import { goal, ms, pct, type Row, share, spread } from "./stats.ts";

const failures = (s: Side) => {
  const parts = Object.entries(s.fleet.failures).map(([status, n]) => `${status === "0" ? "no answer" : status}×${n}`);
  return parts.length ? `${s.fleet.failed} (${parts.join(", ")})` : "0";
};
export const rateLimitedShare = (s: Side) => share(s.upstream.rateLimited, s.upstream.attempts);
const attempts = (s: Side) => `${s.upstream.attempts}, ${pct(rateLimitedShare(s))} 429`;
const latency = (s: Side) => {
  const l = spread(s.fleet.latency);
  return `${ms(l.p50)} / ${ms(l.p99)}`;
};

/** answered (target: all), failures, upstream attempts with their 429 share, p50 / p99. */
export function outcomeRows(scenario: string, direct: Side, gw: Side, max429?: number): Row[] {
  const all = gw.fleet.ok === gw.fleet.requests;
  const rows: Row[] = [
    goal({ scenario, metric: "answered", baseline: `${direct.fleet.ok}/${direct.fleet.requests}`, value: `${gw.fleet.ok}/${gw.fleet.requests}` }, "all", all),
    { scenario, metric: "client-visible failures", baseline: failures(direct), value: failures(gw) },
  ];
  const up = { scenario, metric: "upstream attempts, 429 share", baseline: attempts(direct), value: attempts(gw) };
  rows.push(max429 === undefined ? up : goal(up, `<= ${pct(max429, 0)}`, rateLimitedShare(gw) <= max429));
  rows.push({ scenario, metric: "latency p50 / p99", baseline: latency(direct), value: latency(gw) });
  return rows;
}

/** The gateway's limiter at the end: cuts, final limit, phase (no baseline: direct has none). */
export function limiterRow(scenario: string, gw: Side, maxCuts?: number): Row {
  const s = gw.limiter;
  const by = (reason: string) => s?.history.filter((h) => h.reason === reason).length ?? 0;
  const text = s
    ? `${cuts(s)} cuts (${by("rate_limit")} on 429, ${by("quota")} on quota), limit ${s.concurrency.limit} (${s.concurrency.phase})`
    : "limiter state unavailable";
  const row = { scenario, metric: "limiter: cuts, final limit", baseline: "n/a", value: text };
  return maxCuts === undefined ? row : goal(row, `${maxCuts} cuts`, s !== null && cuts(s) <= maxCuts);
}

/** Summary of a run kept in results.json: the numbers behind the rows. */
export function raw(s: Side) {
  const { log, attemptTimes: _t, ...upstream } = s.upstream;
  const first = upstream.firstAttemptAt ?? 0;
  // When the 429s came, in ms from the first attempt: a cold start, or drift in steady state?
  const rateLimitedAtMs = log.filter((a) => a.outcome === "rate_limited").map((a) => a.at - first).slice(0, 200);
  const { sentAt: _s, queueMs: _q, ...fleet } = s.fleet;
  return { via: s.via, fleet: { ...fleet, latency: spread(s.fleet.latency) }, upstream: { ...upstream, rateLimitedAtMs }, limiter: s.limiter };
}
