// The limiter's pure core in process: how many permits per second one LimiterCore grants and takes
// back, driven through LimiterDriver exactly as the Durable Object drives it (acquire: enqueue +
// pump; settle: settle + pump; release: release + pump), with LIMIT leases held and DEPTH waiters queued
// behind them. src uses extensionless imports, so this runs under tsx:
//   npx tsx bench/core.ts [--quick]     prints one JSON line
import { DEFAULT_LIMITER } from "../src/config/limits.ts";
import { LimiterCore, type Outcome } from "../src/limiter/core.ts";
import { LimiterDriver } from "../src/limiter/driver.ts";

const LIMIT = 64;
const DEPTHS = [0, 100, 1_000, 10_000];
const quick = process.argv.includes("--quick");

function outcome(now: number): Outcome {
  // A success with the headers a real provider sends, so the quota model runs too.
  const reading = { limit: 1e9, remaining: 1e9 - 1, resetAt: now + 60_000 };
  return { cls: "success", status: 200, info: { retryAfterMs: null, requests: reading, tokens: reading }, latencyMs: 500, attempt: 1, final: true };
}

function measure(depth: number, ms: number): number {
  const core = new LimiterCore(DEFAULT_LIMITER);
  core.configure({ limit: LIMIT }, Date.now(), () => null);
  const held: string[] = [];
  let permits = 0;
  const driver = new LimiterDriver(core, Date.now, {
    granted: (w) => {
      held.push(w.id);
      permits++;
    },
  });
  let seq = 0;
  const acquire = () => void driver.acquire({ id: `w${seq++}`, cost: 40, retry: false, deadline: Date.now() + 120_000 });
  for (let i = 0; i < LIMIT + depth; i++) acquire();
  permits = 0;
  const start = performance.now();
  while (performance.now() - start < ms)
    for (let i = 0; i < 100; i++) {
      const id = held.shift()!;
      acquire();
      driver.settle(id, { ...outcome(Date.now()), release: false });
      driver.release(id);
    }
  const rate = permits / ((performance.now() - start) / 1000);
  driver.close();
  return rate;
}

const results = DEPTHS.map((depth) => ({ depth, permitsPerSec: Math.round(measure(depth, quick ? 300 : 1_000)) }));
process.stdout.write(`${JSON.stringify({ limit: LIMIT, results })}\n`);
