// Per-credential limits (keyLimits) and per-credential stats: a pool's members each with a plan of
// their own, one stand-in serving them all.
import { describe, expect, it } from "vitest";
import { parseCli } from "../support/standin/cli.ts";
import { byCredentialIn } from "../support/standin/index.ts";
import { chatBody, oaHeaders, post, sleep, standin } from "./standin-helpers.ts";

const chat = (s: Awaited<ReturnType<typeof standin>>, key: string) =>
  post(s, "/v1/chat/completions", chatBody(), oaHeaders(key)).then(async (r) => (await r.arrayBuffer(), r));

describe("stand-in: keyLimits", () => {
  it("a credential's own limits replace the global ones for it alone, in its buckets and its headers", async () => {
    // Slow refills (a request every 5 and 10 s), so a loaded machine cannot refill a bucket between two requests.
    const s = await standin({ rpm: 6, burst: { requests: 1 }, keyLimits: { big: { rpm: 12, burst: { requests: 3 } } } });
    const big = [];
    for (let i = 0; i < 4; i++) big.push(await chat(s, "big"));
    expect(big.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(big[0]!.headers.get("x-ratelimit-limit-requests")).toBe("12");
    expect(big[0]!.headers.get("x-ratelimit-remaining-requests")).toBe("2");
    const small = [await chat(s, "small"), await chat(s, "small")];
    expect(small.map((r) => r.status)).toEqual([200, 429]);
    expect(small[0]!.headers.get("x-ratelimit-limit-requests")).toBe("6");
  });

  it("tokens and the concurrency cap per credential too", async () => {
    const s = await standin({ latencyMs: 150, keyLimits: { capped: { maxConcurrent: 1, tpm: 5_000 } } });
    const all = await Promise.all([chat(s, "capped"), chat(s, "capped"), chat(s, "free"), chat(s, "free")]);
    expect(all.map((r) => r.status)).toEqual(expect.arrayContaining([200, 429, 200, 200]));
    expect(all.slice(2).map((r) => r.status)).toEqual([200, 200]);
    expect(s.stats().rateLimitedBy.concurrency).toBe(1);
    const ok = all.find((r) => r.status === 200 && r.headers.get("x-ratelimit-limit-tokens") === "5000");
    expect(ok, "the capped credential's tokens header names its own TPM").toBeTruthy();
  });

  it("POST /_config changes them live and replaces the whole map; bad ones are refused with the reason", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 }, keyLimits: { a: { burst: { requests: 5 } } } });
    expect((await chat(s, "a")).status).toBe(200);
    expect((await chat(s, "a")).status).toBe(200);
    const res = await fetch(`${s.url}/_config`, { method: "POST", body: JSON.stringify({ keyLimits: { b: { rpm: 6_000 } } }) });
    expect(await res.json()).toMatchObject({ keyLimits: { b: { rpm: 6_000 } } });
    expect(s.options().keyLimits).toEqual({ b: { rpm: 6_000 } });
    // a's are gone: back to the global 1-request burst (its bucket's level clamped to it).
    expect([(await chat(s, "a")).status, (await chat(s, "a")).status]).toEqual([200, 429]);
    for (const [bad, reason] of [
      [{ keyLimits: { a: { rpn: 1 } } }, /keyLimits\["a"\]: unknown field "rpn"/],
      [{ keyLimits: { a: { rpm: "fast" } } }, /keyLimits\["a"\]: rpm must be a number/],
      [{ keyLimits: { a: { latencyMs: 5 } } }, /unknown field "latencyMs"/],
      [{ keyLimits: { a: 5 } }, /keyLimits\["a"\] must be an object/],
      [{ keyLimits: [] }, /keyLimits must be an object/],
    ] as const) {
      const r = await fetch(`${s.url}/_config`, { method: "POST", body: JSON.stringify(bad) });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(reason);
    }
  });

  it("the command line takes them as JSON", () => {
    expect(parseCli(["--key-limits", '{"sk-a":{"rpm":900},"sk-b":{"rpm":300}}'])).toEqual({ keyLimits: { "sk-a": { rpm: 900 }, "sk-b": { rpm: 300 } } });
  });
});

describe("stand-in: stats per credential", () => {
  it("counts attempts, successes, 429s, quota errors and the rest for each credential", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 2 }, quotaExhaustedKeys: ["broke"] });
    for (const key of ["a", "a", "a", "b", "broke"]) await chat(s, key);
    await post(s, "/v1/chat/completions", "{not json", oaHeaders("b"));
    expect(s.stats().byCredential).toEqual({
      a: { attempts: 3, successes: 2, rateLimited: 1, quotaErrors: 0, other: 0 },
      b: { attempts: 2, successes: 1, rateLimited: 0, quotaErrors: 0, other: 1 },
      broke: { attempts: 1, successes: 0, rateLimited: 0, quotaErrors: 1, other: 0 },
    });
    s.resetStats();
    expect(s.stats().byCredential).toEqual({});
  });

  it("byCredentialIn counts one time window of the log", async () => {
    const s = await standin({ rpm: 0, tpm: 0 });
    await chat(s, "a");
    await chat(s, "b");
    await sleep(20);
    const mid = Date.now();
    await sleep(5);
    await chat(s, "a");
    const { log } = s.stats();
    expect(byCredentialIn(log, mid)).toEqual({ a: { attempts: 1, successes: 1, rateLimited: 0, quotaErrors: 0, other: 0 } });
    expect(byCredentialIn(log, -Infinity, mid)).toMatchObject({ a: { successes: 1 }, b: { successes: 1 } });
    expect(byCredentialIn(log)).toEqual(s.stats().byCredential);
  });
});
