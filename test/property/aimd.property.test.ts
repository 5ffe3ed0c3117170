import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import type { LimiterConfig } from "../../src/config/limits";
import {
  type AimdState, HISTORY_MAX, type HistoryEntry, cut, initAimd, noteInFlight, onSuccess, onTransient, rebound, setManual,
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
  | { k: "cut"; reason: "rate_limit" | "quota"; dt: number; inFlight: number }
  | { k: "manual"; limit: number; dt: number; inFlight: number }
  | { k: "rebound"; cfg: LimiterConfig; dt: number; inFlight: number };

const inFlight = fc.oneof(fc.nat({ max: 400 }), fc.constant(0));
const dt = fc.oneof(fc.nat({ max: 10_000 }), fc.constant(0));
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("success" as const), dt, inFlight }), weight: 4 },
  // A whole round at once, so that limits of a few hundred can still grow within one sequence.
  { arbitrary: fc.record({ k: fc.constant("success-burst" as const), dt, n: fc.nat({ max: 600 }), inFlight }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("note" as const), inFlight }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("transient" as const) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("cut" as const), reason: fc.constantFrom("rate_limit" as const, "quota" as const), dt, inFlight }), weight: 3 },
  {
    // Any finite number: the clamp must make an integer in bounds of it (NaN is left out: clamp(NaN) is NaN, but no caller can pass one, since configure only takes zod-checked integers).
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
 *     from !== to, and is the last history entry; a call that returns null leaves limit unchanged;
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
    ok(s.history.at(-1) === changed, "the returned entry is the last history entry", s);
    const prev = s.history.at(-2);
    ok(prev === undefined || prev.to === changed.from, "the returned entry's from is the previous entry's to", s);
    ok(prev === undefined || prev.at <= changed.at, "history timestamps never go back", s);
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
      case "cut":
        now += o.dt;
        changed = cut(s, cfg, o.reason, now, o.inFlight);
        break;
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
      fc.record({ k: fc.constant("cut" as const), reason: fc.constant("rate_limit" as const), dt: fc.constant(0), inFlight }),
      fc.record({ k: fc.constant("manual" as const), limit: fc.integer({ min: 1, max: 8 }), dt: fc.constant(1), inFlight }),
      fc.record({ k: fc.constant("success-burst" as const), dt: fc.constant(1), n: fc.integer({ min: 1, max: 16 }), inFlight: fc.constant(8) }),
    );
    let full = 0;
    fc.assert(
      fc.property(
        config(8).map((c) => ({ ...c, cooldownMs: 0, maxConcurrency: Math.max(c.maxConcurrency, c.minConcurrency + 1) })),
        fc.array(churn, { minLength: 150, maxLength: 400 }),
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
