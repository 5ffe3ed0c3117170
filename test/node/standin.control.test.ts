// Faults, stats, the control routes and the command line of the stand-in.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { parseCli } from "../support/standin/cli.ts";
import { goDuration } from "../support/standin/dialect.ts";
import type { Stats } from "../support/standin/index.ts";
import { anHeaders, chatBody, messagesBody, oaHeaders, post, sleep, standin } from "./standin-helpers.ts";

describe("stand-in: faults", () => {
  const faults = { "524": 0.2, "529": 0.1, "503": 0.1 } as const;

  async function run(s: Awaited<ReturnType<typeof standin>>, n: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await post(s, "/v1/messages", messagesBody(), anHeaders());
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return statuses;
  }

  it("a seeded run gives the expected mix, and the same seed gives the same sequence", async () => {
    const s = await standin({ faults, seed: 42, latencyMs: 0, rpm: 0, tpm: 0 });
    const first = await run(s, 300);
    const count = (st: number) => first.filter((x) => x === st).length;
    expect(count(524)).toBeGreaterThan(40);
    expect(count(524)).toBeLessThan(80);
    expect(count(529)).toBeGreaterThan(15);
    expect(count(529)).toBeLessThan(45);
    expect(count(503)).toBeGreaterThan(15);
    expect(count(503)).toBeLessThan(45);
    expect(s.stats()).toMatchObject({ successes: count(200), faults: { "524": count(524), "529": count(529), "503": count(503) } });
    s.reset(); // re-seeds the PRNG
    expect(await run(s, 300)).toEqual(first);
    s.configure({ seed: 7 });
    expect(await run(s, 300)).not.toEqual(first);
  });

  it("524 is Cloudflare's HTML page; 529 is Anthropic's overloaded_error; 503 is JSON per provider", async () => {
    const s = await standin({ faults: { "524": 1 }, latencyMs: 0 });
    const t = await post(s, "/v1/chat/completions", chatBody(), oaHeaders());
    expect(t.status).toBe(524);
    expect(t.statusText).toBe("A Timeout Occurred");
    expect(t.headers.get("content-type")).toMatch(/^text\/html/);
    expect(t.headers.get("x-ratelimit-limit-requests")).toBeNull();
    expect(await t.text()).toMatch(/api\.openai\.com \| 524: A timeout occurred[\s\S]*Error code 524/);
    s.configure({ faults: { "529": 1 } });
    const o = await post(s, "/v1/messages", messagesBody(), anHeaders());
    expect(o.status).toBe(529);
    expect(await o.json()).toMatchObject({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    s.configure({ faults: { "503": 1 } });
    const u = await post(s, "/v1/chat/completions", chatBody(), oaHeaders());
    expect(u.status).toBe(503);
    expect(await u.json()).toMatchObject({ error: { type: "server_error" } });
  });
});

describe("stand-in: stats and control routes", () => {
  it("counts attempts, outcomes, per-credential attempts and their times", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 2 } });
    const before = Date.now();
    await post(s, "/v1/chat/completions", chatBody(), oaHeaders("a"));
    await post(s, "/v1/chat/completions", chatBody(), oaHeaders("a"));
    await post(s, "/v1/chat/completions", chatBody(), oaHeaders("a"));
    await post(s, "/v1/messages", messagesBody(), anHeaders("b"));
    await post(s, "/v1/chat/completions", "{not json", oaHeaders("b"));
    const st = s.stats();
    expect(st).toMatchObject({ attempts: 5, successes: 3, rateLimited: 1, invalid: 1, perCredential: { a: 3, b: 2 } });
    expect(st.attemptTimes).toHaveLength(5);
    expect(st.attemptTimes.every((t) => t >= before)).toBe(true);
    expect(st.firstAttemptAt).toBe(st.attemptTimes[0]);
    expect(st.log.map((a) => a.status)).toEqual([200, 200, 429, 200, 400]);
    expect(st.log[3]).toMatchObject({ provider: "anthropic", model: "claude-haiku-4-5", outcome: "success" });
    const viaHttp = (await (await fetch(`${s.url}/_stats`)).json()) as Stats;
    expect(viaHttp).toEqual(st);
    s.resetStats();
    expect(s.stats()).toMatchObject({ attempts: 0, attemptTimes: [], perCredential: {} });
  });

  it("tracks in-flight requests and callers that leave mid-stream", async () => {
    const s = await standin({ latencyMs: 300, streamChunks: 3 });
    const ctrl = new AbortController();
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: "POST", headers: oaHeaders(), body: JSON.stringify(chatBody({ stream: true })), signal: ctrl.signal,
    });
    await res.body!.getReader().read();
    expect(s.stats().inFlight).toBe(1);
    ctrl.abort();
    await sleep(50);
    expect(s.stats()).toMatchObject({ inFlight: 0, peakInFlight: 1, aborted: 1, completed: 0 });
  });

  it("hold parks accepted requests until it is turned off; one whose caller left while held is neither answered nor counted", async () => {
    const s = await standin({ latencyMs: 0, hold: true });
    const ctrl = new AbortController();
    const left = fetch(`${s.url}/v1/chat/completions`, { method: "POST", headers: oaHeaders(), body: JSON.stringify(chatBody()), signal: ctrl.signal }).catch(() => null);
    const kept = post(s, "/v1/chat/completions", chatBody(), oaHeaders());
    while (s.stats().held < 2) await sleep(5);
    expect(s.stats()).toMatchObject({ held: 2, inFlight: 2, usage: { input: 0, output: 0 } });
    ctrl.abort();
    await left;
    while (s.stats().held > 1) await sleep(5);
    await fetch(`${s.url}/_config`, { method: "POST", body: JSON.stringify({ hold: false }) });
    const body = (await (await kept).json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    await sleep(20);
    expect(s.stats()).toMatchObject({ held: 0, inFlight: 0, aborted: 1, completed: 1, usage: { input: body.usage.prompt_tokens, output: body.usage.completion_tokens } });
  });

  it("POST /_config changes options live, rejects bad ones; POST /_reset refills buckets", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 } });
    const cfg = await fetch(`${s.url}/_config`, { method: "POST", body: JSON.stringify({ rpm: 120, headers: false }) });
    expect(await cfg.json()).toMatchObject({ rpm: 120, headers: false });
    const bad = await fetch(`${s.url}/_config`, { method: "POST", body: JSON.stringify({ rpn: 1 }) });
    expect(bad.status).toBe(400);
    expect(() => s.configure({ faults: { "524": 0.9, "529": 0.2 } })).toThrow(/more than 1/);
    expect((await post(s, "/v1/chat/completions", chatBody(), oaHeaders())).status).toBe(200);
    expect((await post(s, "/v1/chat/completions", chatBody(), oaHeaders())).status).toBe(429);
    await fetch(`${s.url}/_reset`, { method: "POST" });
    expect(s.stats().attempts).toBe(0);
    expect((await post(s, "/v1/chat/completions", chatBody(), oaHeaders())).status).toBe(200);
  });

  it("unknown paths get 404 in the provider's shape", async () => {
    const s = await standin();
    const res = await post(s, "/v1/nothing", {}, oaHeaders());
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { message: "Invalid URL (POST /v1/nothing)" } });
  });
});

describe("stand-in: formats and command line", () => {
  it("goDuration writes OpenAI's reset durations", () => {
    expect([0, 20, 999.2, 1000, 1500, 17_280, 360_000, 90_500, 3_723_000].map(goDuration)).toEqual(
      ["0s", "20ms", "1s", "1s", "1.5s", "17.28s", "6m0s", "1m30.5s", "1h2m3s"],
    );
  });

  it("parseCli maps flags to options", () => {
    expect(parseCli([
      "--port", "9100", "--rpm=600", "--burst", "0.5", "--no-headers", "--retry-after", "long", "--latency", "200",
      "--fault", "524=0.1", "--fault", "529=0.05", "--quota-key", "k1,k2", "--echo", "--itpm", "1000",
    ])).toEqual({
      port: 9100, rpm: 600, burst: 0.5, headers: false, retryAfter: "long", latencyMs: 200,
      faults: { "524": 0.1, "529": 0.05 }, quotaExhaustedKeys: ["k1", "k2"], echo: true, itpm: 1000,
    });
    expect(parseCli(["--burst", '{"requests":5}', "--config", '{"tpm":1}'])).toEqual({ burst: { requests: 5 }, tpm: 1 });
    expect(() => parseCli(["--nope", "1"])).toThrow(/unknown option/);
  });

  it("the CLI runs under plain Node type stripping and prints its URL", async () => {
    const cli = new URL("../support/standin/cli.ts", import.meta.url).pathname;
    const child = spawn(process.execPath, [cli, "--port", "0", "--rpm", "5"], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`cli exited with ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: oaHeaders(), body: JSON.stringify(chatBody()) });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit-requests")).toBe("5");
    } finally {
      child.kill("SIGTERM");
    }
  });
});
