import { expect, it } from "vitest";
import { soak } from "../soak/soak.ts";

// A short soak in every CI run; `npm run soak -- --baseline` (20,000 requests) is the long one, by hand.
it("a soak of random 429s, 5xx, 524s, slow streams and leaving callers: every request accounted for", async () => {
  const r = await soak({ count: 300, concurrency: 16, seed: 7 });
  console.log(`soak: ${JSON.stringify(r)}`);
  expect(r.unaccounted).toBe(0);
  expect(r.internalErrors).toBe(0);
  expect(r.aborted + Object.values(r.answered).reduce((a, b) => a + b, 0)).toBe(300);
  expect(r.inFlightAtEnd).toBe(0);
  expect(r.queuedAtEnd).toBe(0);
  expect(r.leasesExpired).toBe(0); // no slot came back by expiry: every one was released
  expect(r.upstream.attempts).toBeGreaterThan(300); // faults really happened and were retried
  expect(r.rssEndMb).toBeLessThan(1_024);
}, 240_000);
