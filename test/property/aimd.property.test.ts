import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import type { LimiterConfig } from "../../src/config/limits";
import {
  type AimdState, fitPace, HISTORY_MAX, type HistoryEntry, initAimd, noteInFlight, onConcurrencyLimit, onSuccess, onTransient, rebound, setManual,
} from "../../src/limiter/aimd";


/** A consistent config, as checkBounds and the admin schema allow: integers 1 <= min <= start <= max, factor in (0, 1). */
const config = (maxBound = 300): fc.Arbitrary<LimiterConfig> =>
  fc
    .tuple(
      fc.integer({ min: 1, max: maxBound }),
      fc.integer({ min: 1, max: maxBound }),
      fc.integer({ min: 1, max: maxBound }),
      fc.oneof(fc.double({ min: 0, max: 1, minExcluded: true, maxExcluded: true, noNaN: true }), fc.constantFrom(0.5, 0.01, 0.99, Number.EPSILON, 1 - Number.EPSILON)),
      fc.oneof(fc.double({ min: 0, max: 100, minExcluded: true, noNaN: true }), fc.constantFrom(1, 50, 80, 100)),
      fc.integer({ min: 0, max: 5_000 }),
    )
    .map(([a, b, c, decreaseFactor, scaleUpPercent, cooldownMs]) => {
      const [minConcurrency, startConcurrency, maxConcurrency] = [a, b, c].sort((x, y) => x - y) as [number, number, number];
      return { minConcurrency, startConcurrency, maxConcurrency, decreaseFactor, scaleUpPercent, cooldownMs, leaseTtlMs: 60_000 };
    });

type Op =
  | { k: "success"; dt: number; inFlight: number }
  | { k: "success-burst"; dt: number; n: number; inFlight: number }
  | { k: "note"; inFlight: number }
  | { k: "transient" }
  | { k: "refuse"; level: number | null; seq: number | null; dt: number; inFlight: number }
  | { k: "pace"; need: number; dt: number; inFlight: number }
  | { k: "manual"; limit: number; dt: number; inFlight: number }
  | { k: "rebound"; cfg: LimiterConfig; dt: number; inFlight: number };

const inFlight = fc.oneof(fc.nat({ max: 400 }), fc.constant(0));
const dt = fc.oneof(fc.nat({ max: 10_000 }), fc.constant(0));
/** A concurrency 429: the level it was granted at (or unknown), its grant number (or unknown). */
const refuse = (gap: fc.Arbitrary<number>) =>
  fc.record({
    k: fc.constant("refuse" as const),
    level: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
    seq: fc.option(fc.nat({ max: 50 }), { nil: null }),
    dt: gap,
    inFlight,
  });
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("success" as const), dt, inFlight }), weight: 4 },
  // A whole round at once, so that limits of a few hundred can still grow within one sequence.
  { arbitrary: fc.record({ k: fc.constant("success-burst" as const), dt, n: fc.nat({ max: 600 }), inFlight }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("note" as const), inFlight }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("transient" as const) }), weight: 1 },
  { arbitrary: refuse(dt), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("pace" as const), need: fc.integer({ min: -5, max: 600 }), dt, inFlight }), weight: 1 },
  {
    // Any finite number: the clamp must make an integer in bounds of it (NaN is left out: clamp(NaN) is NaN, but no caller can pass one, since configure only takes integers checked by parseOverride).
    arbitrary: fc.record({
      k: fc.constant("manual" as const),
      limit: fc.oneof(fc.integer({ min: -10, max: 400 }), fc.double({ noNaN: true })),
      dt, inFlight,
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("rebound" as const), cfg: config(), dt, inFlight }), weight: 1 },
);

/**
 * Property: for any consistent config and any sequence of AIMD calls (each with a non-decreasing
 * clock and any in-flight count), after every call
 *   - limit is an integer in [cfg.minConcurrency, cfg.maxConcurrency] of the config in force
 *     (the latest one given to rebound);
 *   - history.length <= HISTORY_MAX (200);
 *   - the entry a call returns has from = the limit before the call, to = the limit after it,
 *     from !== to, and is the last history entry (or was merged into it: a growth step of the
 *     same reason within a second); a call that returns null leaves limit unchanged;
 *   - with a known ceiling, pacing never raises the limit to it or past it;
 *   - history is a chain: every entry's `to` is the next entry's `from`, the last entry's `to`
 *     is the current limit (so every entry's `to` is the limit right after it), and timestamps never go back.
 */
/** Plain checks: `expect` is far too slow for the hot loop of 100,000 runs. */
function ok(cond: boolean, what: string, s: AimdState): asserts cond {
  if (!cond) throw new Error(`${what} (limit ${s.limit}, last entries ${JSON.stringify(s.history.slice(-3))})`);
}

/** After every call; `whole` re-walks the whole history chain (done at the end of a run: entries are only appended or trimmed). */
function check(s: AimdState, cfg: LimiterConfig, before: number, changed: HistoryEntry | null, whole = false) {
  ok(Number.isInteger(s.limit), "limit is an integer", s);
  ok(s.limit >= cfg.minConcurrency && s.limit <= cfg.maxConcurrency, `limit within [${cfg.minConcurrency}, ${cfg.maxConcurrency}]`, s);
  ok(s.history.length <= HISTORY_MAX, "history.length <= HISTORY_MAX", s);
  if (changed) {
    ok(changed.from === before, `returned entry's from is the limit before the call (${before})`, s);
    ok(changed.to === s.limit, "returned entry's to is the limit after the call", s);
    ok(changed.to !== changed.from, "a returned entry is a real change", s);
    const last = s.history.at(-1);
    if (last === changed) {
      const prev = s.history.at(-2);
      ok(prev === undefined || prev.to === changed.from, "the returned entry's from is the previous entry's to", s);
      ok(prev === undefined || prev.at <= changed.at, "history timestamps never go back", s);
    } else {
      ok(last !== undefined && last.reason === changed.reason && last.to === changed.to && last.at === changed.at, "a merged step extends the last entry", s);
    }
  } else ok(s.limit === before, `no entry returned, so the limit is unchanged (${before})`, s);
  for (let i = 1; whole && i < s.history.length; i++) {
    const [prev, cur] = [s.history[i - 1] as HistoryEntry, s.history[i] as HistoryEntry];
    ok(cur.from === prev.to, `history[${i}].from === history[${i - 1}].to`, s);
    ok(cur.at >= prev.at, `history[${i}].at >= history[${i - 1}].at`, s);
  }
  ok(s.history.length === 0 || s.history.at(-1)?.to === s.limit, "last history entry's to is the limit", s);
}

function run(initial: LimiterConfig, startLimit: number | undefined, ops: Op[]) {
  let cfg = initial;
  const s = initAimd(cfg, startLimit);
  let now = 0;
  check(s, cfg, s.limit, null);
  for (const o of ops) {
    const before = s.limit;
    let changed: HistoryEntry | null = null;
    switch (o.k) {
      case "success":
        now += o.dt;
        changed = onSuccess(s, cfg, now, o.inFlight);
        break;
      case "success-burst":
        now += o.dt;
        for (let i = 0; i < o.n; i++) {
          const b = s.limit;
          const c = onSuccess(s, cfg, now, o.inFlight);
          check(s, cfg, b, c);
          noteInFlight(s, o.inFlight);
        }
        continue;
      case "note":
        noteInFlight(s, o.inFlight);
        break;
      case "transient":
        onTransient(s);
        break;
      case "refuse":
        now += o.dt;
        changed = onConcurrencyLimit(s, cfg, now, o.inFlight, { inFlightAtGrant: o.level, grantSeq: o.seq, seqNow: (o.seq ?? 0) + 1 }).entry;
        break;
      case "pace": {
        now += o.dt;
        const ceiling = s.ceiling;
        changed = fitPace(s, cfg, o.need, now, o.inFlight);
        ok(changed === null || ceiling === null || s.limit < ceiling || s.limit === cfg.minConcurrency, "pace stays under a known ceiling", s);
        break;
      }
      case "manual":
        now += o.dt;
        changed = setManual(s, cfg, o.limit, now, o.inFlight);
        break;
      case "rebound":
        now += o.dt;
        cfg = o.cfg;
        changed = rebound(s, cfg, now, o.inFlight);
        break;
    }
    check(s, cfg, before, changed);
  }
  check(s, cfg, s.limit, null, true);
  return s;
}

describe("AIMD properties", () => {
  it("limit stays an integer within [min, max]; history is bounded and chained to the limit", () => {
    fc.assert(
      fc.property(
        config(),
        fc.option(fc.oneof(fc.integer({ min: -5, max: 400 }), fc.double({ noNaN: true })), { nil: undefined }),
        fc.array(op, { maxLength: 60 }),
        (cfg, start, ops) => void run(cfg, start, ops),
      ),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it("history stays bounded at HISTORY_MAX, still chained, under long runs of changes", () => {
    // Small bounds and no debounce make almost every call a change, so the 200-entry cap is hit and trimmed.
    const churn: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: refuse(fc.constant(0)), weight: 1 },
      { arbitrary: fc.record({ k: fc.constant("manual" as const), limit: fc.integer({ min: 1, max: 8 }), dt: fc.constant(1), inFlight }), weight: 4 },
      { arbitrary: fc.record({ k: fc.constant("success-burst" as const), dt: fc.constant(1), n: fc.integer({ min: 1, max: 16 }), inFlight: fc.constant(8) }), weight: 1 },
    );
    let full = 0;
    fc.assert(
      fc.property(
        config(8).map((c) => ({ ...c, cooldownMs: 0, maxConcurrency: Math.max(c.maxConcurrency, c.minConcurrency + 1) })),
        fc.array(churn, { minLength: 400, maxLength: 800 }),
        (cfg, ops) => {
          const s = run(cfg, undefined, [{ k: "note", inFlight: 8 }, ...ops]);
          expect(s.history.length).toBeLessThanOrEqual(HISTORY_MAX);
          if (s.history.length === HISTORY_MAX) full++;
        },
      ),
      { numRuns: Math.max(20, Math.ceil(RUNS / 20)) },
    );
    expect(full).toBeGreaterThan(0); // the cap was really reached, and trimmed, in some runs
  }, TIMEOUT);
});
