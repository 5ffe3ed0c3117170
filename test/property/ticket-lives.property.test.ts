import fc from "fast-check";
import { describe, it } from "vitest";
import { DEFAULT_LIMITER, type LimiterConfig } from "../../src/config/limits";
import type { OutcomeClass } from "../../src/policy/types";
import { RUNS, TIMEOUT } from "./runs";
import { ISOLATES, type LifeOp, Lives } from "./ticket-lives";

/*
 * Tickets (issues 36 and 39) across the object's lives and isolates that answers reach late, out of
 * order, or never (the isolate died): several isolates ask for tickets and use them, the answers
 * they wait for arrive in any order, isolates die with tickets, ops and requests out, and the object
 * flushes and restarts (reading back its last flush). The checks (L1-L5) are in ticket-lives.ts.
 */
const iso = fc.nat(ISOLATES - 1);
const opArb: fc.Arbitrary<LifeOp> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("arrive" as const), iso, cost: fc.integer({ min: 1, max: 400 }) }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant("send" as const), iso }), weight: 6 },
  { arbitrary: fc.record({ k: fc.constant("hear" as const), iso, pick: fc.nat() }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant("finish" as const), pick: fc.nat(), cls: fc.oneof({ arbitrary: fc.constant<OutcomeClass>("success"), weight: 8 }, fc.constant<OutcomeClass>("rate_limit")) }), weight: 9 },
  // Mostly within a ticket's second, so isolates ask and use; now and then past a lapse, a grace or a lease.
  { arbitrary: fc.record({ k: fc.constant("tick" as const), dt: fc.oneof({ arbitrary: fc.nat(300), weight: 4 }, fc.nat(3_000), fc.nat(40_000)) }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("kill" as const), iso }), weight: 1 },
  { arbitrary: fc.constant({ k: "flush" as const }), weight: 2 },
  { arbitrary: fc.constant({ k: "restart" as const }), weight: 1 },
);
const configArb: fc.Arbitrary<LimiterConfig> = fc
  .record({ start: fc.integer({ min: 8, max: 32 }), ttl: fc.constantFrom(5_000, 60_000) })
  .map(({ start, ttl }) => ({ ...DEFAULT_LIMITER, minConcurrency: 1, startConcurrency: start, maxConcurrency: 64, leaseTtlMs: ttl, cooldownMs: 1_000 }));

describe("tickets across the object's lives, with answers reordered and isolates lost", () => {
  it("(L1-L5) never past the limit, each request charged once, no stale ticket used, slots back within the grace, nothing out unknown", () => {
    fc.assert(
      fc.property(configArb, fc.integer({ min: 20, max: 600 }), fc.array(opArb, { maxLength: 150, size: "max" }), (cfg, limit, ops) => {
        const h = new Lives(cfg, limit);
        ops.forEach((o, i) => {
          h.step = i;
          h.apply(o);
        });
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
