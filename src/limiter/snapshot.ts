import type { LimiterCore } from "./core";
import { isOut } from "./membership";
import { summarize } from "./metrics";
import { describe } from "./quota";
import type { KeyMeta, LimiterSnapshot } from "./types";

const iso = (ms: number) => new Date(ms).toISOString();

/** The contract's JSON view of one limiter. */
export function snapshot(core: LimiterCore, meta: KeyMeta | null, lastSeen: number | null, now: number, cacheReadShare: number | null = null): LimiterSnapshot {
  const cfg = core.config;
  return {
    key: meta?.key ?? "",
    provider: meta?.provider ?? "",
    model: meta?.model ?? "",
    concurrency: {
      limit: core.aimd.limit,
      min: cfg.minConcurrency,
      max: cfg.maxConcurrency,
      inFlight: core.inFlight,
      queued: core.queue.size,
      phase: core.aimd.phase,
      tickets: core.leases.idle + core.tickets.unseenSlots,
    },
    out: isOut(core.member) ? { until: iso(core.member.until), reason: core.member.reason ?? "" } : null,
    ratePerMin: core.view(core.pace.cost ?? 1, now).perMin ?? null,
    ...(cacheReadShare !== null && { cacheReadShare: Math.round(cacheReadShare * 1000) / 1000 }),
    cooldownUntil: core.cooldownUntil > now ? iso(core.cooldownUntil) : null,
    quotas: {
      requests: describe(core.quota.requests, now), tokens: describe(core.quota.tokens, now),
      ...(core.quota.output && { output: describe(core.quota.output, now) }),
    },
    metrics: summarize(core.metrics),
    history: core.aimd.history.map((h) => ({ at: iso(h.at), from: h.from, to: h.to, reason: h.reason })),
    config: { ...core.overrides },
    lastSeen: lastSeen === null ? null : iso(lastSeen),
    callers: core.callers.view(now, core.queue.queuedBy()),
  };
}
