import { describe, expect, it, vi } from "vitest";
import { DEFAULT_GATEWAY } from "../../src/config/limits";
import { LimiterClient } from "../../src/proxy/limiter-client";
import { type Deps, type Plan, run } from "../../src/proxy/run";
import { ERROR_BODY_MAX } from "../../src/proxy/answer";
import { freshChannel, META, withExchange } from "../support/exchange";

/** `word`: what the object answers each settle (the limiter's word on the retry; absent: nothing). */
function setup(acquire: () => Promise<unknown>, fetchImpl: typeof fetch, signal = new AbortController().signal, over: Partial<Plan> = {}, sleep?: Deps["sleep"], word?: unknown) {
  const calls = { cancel: 0, settle: [] as unknown[], release: 0, acquire: 0 };
  const stub = withExchange({
    acquire: () => (calls.acquire++, acquire()),
    cancel: async () => void calls.cancel++,
    settle: async (_: string, o: unknown) => (calls.settle.push(o), word),
    release: async () => void calls.release++,
    renew: async () => true,
  });
  const ns = { idFromName: () => ({}), get: () => stub } as never;
  const pending: Promise<unknown>[] = [];
  const limiter = new LimiterClient(ns, META, { waitUntil: (p) => pending.push(p), channel: freshChannel() });
  const plan: Plan = {
    url: new URL("https://api.openai.com/v1/chat/completions"), method: "POST", headers: new Headers(), body: new Uint8Array(0),
    key: { key: "openai:m:0", provider: "openai", model: "m" }, cost: 1, deadline: Date.now() + 10_000, maxAttempts: 3,
    gateway: { ...DEFAULT_GATEWAY, baseBackoffMs: 1, maxBackoffMs: 5 }, signal, waitUntil: (p) => pending.push(p), ...over,
  };
  const go = () => run(plan, limiter, { fetch: fetchImpl, now: Date.now, random: () => 0.5, sleep });
  return { go, calls, pending };
}
const GRANT = () => Promise.resolve({ granted: true, leaseId: "l", waitedMs: 0, leaseTtlMs: 60_000 });

describe("run", () => {
  it("answers 503 limiter_unavailable with retry-after when the limiter cannot be reached, and sends nothing", async () => {
    const fetchSpy = vi.fn();
    const { go } = setup(() => Promise.reject(Object.assign(new Error("x"), { overloaded: true })), fetchSpy);
    const res = await go();
    expect(res.status).toBe(503);
    expect(res.headers.get("x-slotgate-error")).toBe("limiter_unavailable");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("answers 502 upstream_unreachable after a network failure on every attempt, releasing each slot", async () => {
    const fetchSpy = vi.fn(() => Promise.reject(new TypeError("connect ECONNREFUSED")));
    const { go, calls } = setup(GRANT, fetchSpy as never);
    const res = await go();
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: { type: "upstream_unreachable", message: "the provider at api.openai.com could not be reached (3 attempts): the request failed before any answer came (TypeError)" } });
    expect(res.headers.get("x-slotgate-attempts")).toBe("3");
    expect(fetchSpy).toHaveBeenCalledTimes(3);
    expect(calls.settle).toHaveLength(3);
    expect(calls.settle.every((o) => (o as { release: boolean; cls: string }).release && (o as { cls: string }).cls === "transient")).toBe(true);
  });

  it("says which host and why it could not be reached, in its own words: never the error's text, which may hold the URL and its key", async () => {
    const cases: [Error, RegExp][] = [
      [new Error("Network connection lost."), /^the provider at api\.openai\.com could not be reached \(1 attempt\): the connection was refused or lost/],
      [new Error("internal error; reference = 1djpr89qe9krgt4clc5ko6nj"), /could not be reached \(1 attempt\): the host name did not resolve, or the TLS handshake failed \(.*reference 1djpr89qe9krgt4clc5ko6nj\)$/],
      [new TypeError("Fetch API cannot load: https://api.openai.com/v1/x?key=AIza-secret-in-url"), /failed before any answer came \(TypeError\)$/],
    ];
    for (const [err, message] of cases) {
      const { go } = setup(GRANT, (() => Promise.reject(err)) as never, undefined, { maxAttempts: 1 });
      const res = await go();
      const text = await res.text();
      expect(JSON.parse(text).error.message).toMatch(message);
      expect(text).not.toContain("secret");
    }
  });

  it("backs off between network failures by the policy's jittered exponential delay, even when the limiter says the retry may come now", async () => {
    const pauses: number[] = [];
    const fetchSpy = vi.fn(() => Promise.reject(new Error("internal error; reference = abc")));
    const over = { maxAttempts: 4, gateway: { ...DEFAULT_GATEWAY, baseBackoffMs: 100, maxBackoffMs: 1_000 } };
    const { go } = setup(GRANT, fetchSpy as never, undefined, over, async (ms) => void pauses.push(ms), { retry: "now" });
    expect((await go()).status).toBe(502);
    expect(fetchSpy).toHaveBeenCalledTimes(4);
    // random() is 0.5: half of 100, 200 and 400 ms (backoff.ts: full jitter under base x 2^(attempt-1)).
    expect(pauses).toEqual([50, 100, 200]);
  });

  it("leaves the queue when the caller disconnects while waiting", async () => {
    const ctrl = new AbortController();
    let resolveGrant!: (v: unknown) => void;
    const fetchSpy = vi.fn();
    const { go, calls } = setup(() => new Promise((r) => (resolveGrant = r)), fetchSpy, ctrl.signal);
    const pending = go();
    await new Promise((r) => setTimeout(r, 10));
    ctrl.abort();
    resolveGrant({ granted: false, reason: "queue_timeout", retryAfterMs: 0 });
    await pending;
    expect(calls.cancel).toBe(1);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("releases the slot when the caller leaves mid-stream", async () => {
    const ctrl = new AbortController();
    const body = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("data: 1\n\n")); } });
    const { go, calls, pending } = setup(GRANT, (() => Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }))) as never, ctrl.signal);
    const res = await go();
    await res.body!.cancel();
    await Promise.allSettled(pending);
    await vi.waitFor(() => expect(calls.release).toBe(1));
  });

  it("reads a plain answer whole and settles and releases it in one call; a stream settles at its headers and releases at its end", async () => {
    const plain = setup(GRANT, (() => Promise.resolve(new Response('{"ok":true}', { headers: { "content-type": "application/json" } }))) as never);
    const res = await plain.go();
    expect(await res.text()).toBe('{"ok":true}');
    await Promise.allSettled(plain.pending);
    await vi.waitFor(() => expect(plain.calls.settle).toHaveLength(1));
    expect(plain.calls.settle[0]).toMatchObject({ cls: "success", release: true, streaming: false });
    expect(plain.calls.release).toBe(0);

    let end!: () => void;
    const body = new ReadableStream({ start: (c) => { c.enqueue(new TextEncoder().encode("data: 1\n\n")); end = () => c.close(); } });
    const sse = setup(GRANT, (() => Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }))) as never);
    const stream = await sse.go();
    const reader = stream.body!.getReader();
    await reader.read();
    await vi.waitFor(() => expect(sse.calls.settle).toHaveLength(1));
    expect(sse.calls.settle[0]).toMatchObject({ cls: "success", release: false, streaming: true });
    expect(sse.calls.release).toBe(0);
    end();
    while (!(await reader.read()).done);
    await vi.waitFor(() => expect(sse.calls.release).toBe(1));
  });

  it("streams a plain answer too large to hold, whole and in order, and releases it at its end", async () => {
    const chunk = new Uint8Array(256 * 1024).fill(120);
    const body = new ReadableStream({ start: (c) => { for (let i = 0; i < 5; i++) c.enqueue(chunk); c.close(); } });
    const big = setup(GRANT, (() => Promise.resolve(new Response(body, { headers: { "content-type": "application/json" } }))) as never);
    const res = await big.go();
    expect((await res.arrayBuffer()).byteLength).toBe(5 * chunk.byteLength);
    await vi.waitFor(() => expect(big.calls.release).toBe(1));
    expect(big.calls.settle[0]).toMatchObject({ release: false });
  });

  /** A provider that never answers: its fetch only ends when the attempt's signal fires. */
  const hung = vi.fn((_: unknown, init?: RequestInit) => new Promise<Response>((_r, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))));
  const quick = (ms: number) => ({ gateway: { ...DEFAULT_GATEWAY, baseBackoffMs: 1, maxBackoffMs: 5, upstreamTimeoutMs: ms, streamIdleMs: ms } });

  it("gives up on a provider that sends no headers within UPSTREAM_TIMEOUT_MS: settled transient (retried, never a cut), slot freed, a clear 502", async () => {
    hung.mockClear();
    const { go, calls } = setup(GRANT, hung as never, undefined, { maxAttempts: 2, ...quick(20) });
    const res = await go();
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({
      error: { type: "upstream_unreachable", message: "the provider at api.openai.com did not answer in time (2 attempts): the provider sent no response headers in time (UPSTREAM_TIMEOUT_MS)" },
    });
    expect(hung).toHaveBeenCalledTimes(2);
    expect(calls.settle).toHaveLength(2);
    expect(calls.settle.every((o) => (o as { cls: string; release: boolean }).cls === "transient" && (o as { release: boolean }).release)).toBe(true);
  });

  it("cuts a stream that goes silent for STREAM_IDLE_MS with an error (never a clean end) and frees its slot", async () => {
    const body = new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("data: 1\n\n")) });
    const { go, calls, pending } = setup(GRANT, (() => Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }))) as never, undefined, quick(20));
    const res = await go();
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await expect(reader.read()).rejects.toBeDefined();
    await Promise.allSettled(pending);
    await vi.waitFor(() => expect(calls.release).toBe(1));
  });

  it("retries a plain answer whose body goes silent, as transient", async () => {
    let n = 0;
    const stall = () => Promise.resolve(new Response(n++ === 0 ? new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("{")) }) : '{"ok":1}', { headers: { "content-type": "application/json" } }));
    const { go, calls } = setup(GRANT, stall as never, undefined, quick(20));
    const res = await go();
    expect(await res.text()).toBe('{"ok":1}');
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
    expect((calls.settle[0] as { cls: string }).cls).toBe("transient");
  });

  it("never queues again for a caller who left during a backoff pause", async () => {
    const ctrl = new AbortController();
    const { go, calls } = setup(GRANT, (() => Promise.reject(new TypeError("reset"))) as never, ctrl.signal, {}, async () => ctrl.abort());
    const res = await go();
    expect(res.status).toBe(499);
    expect(calls.acquire).toBe(1);
  });

  it("posts a cancel when an acquire fails as limiter_unavailable (the object may have granted it)", async () => {
    const { go, calls, pending } = setup(() => Promise.reject(Object.assign(new Error("x"), { overloaded: true })), vi.fn());
    expect((await go()).status).toBe(503);
    await Promise.allSettled(pending);
    await vi.waitFor(() => expect(calls.cancel).toBe(1));
  });

  it.each([
    ["a JSON answer the caller asked to stream", "application/json", true],
    ["an NDJSON answer", "application/x-ndjson", false],
  ])("passes %s through as it comes, not when it ends", async (_, type, stream) => {
    let end!: () => void;
    const body = new ReadableStream({ start: (c) => { c.enqueue(new TextEncoder().encode("[{\"a\":1}\n")); end = () => c.close(); } });
    const { go, calls } = setup(GRANT, (() => Promise.resolve(new Response(body, { headers: { "content-type": type } }))) as never, undefined, { stream });
    const res = await go();
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('[{"a":1}\n');
    expect(calls.release).toBe(0);
    end();
    while (!(await reader.read()).done);
    await vi.waitFor(() => expect(calls.release).toBe(1));
  });

  it("a caller who leaves while a plain body is read is no fault of the provider: released, not settled transient", async () => {
    const ctrl = new AbortController();
    const read = (_: unknown, init?: RequestInit) => Promise.resolve(new Response(new ReadableStream({
      start: (c) => { c.enqueue(new TextEncoder().encode("{")); init!.signal!.addEventListener("abort", () => c.error(new Error("aborted"))); },
    }), { headers: { "content-type": "application/json" } }));
    const { go, calls, pending } = setup(GRANT, read as never, ctrl.signal);
    const res = go();
    await new Promise((r) => setTimeout(r, 10));
    ctrl.abort();
    expect((await res).status).toBe(499);
    await Promise.allSettled(pending);
    await vi.waitFor(() => expect(calls.release).toBe(1));
    expect(calls.settle).toHaveLength(0);
  });

  it("reads at most ERROR_BODY_MAX of an error body, however long the provider goes on", async () => {
    const endless = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(16 * 1024).fill(97)) });
    const { go } = setup(GRANT, (() => Promise.resolve(new Response(endless, { status: 400 }))) as never);
    const res = await go();
    expect(res.status).toBe(400);
    expect((await res.arrayBuffer()).byteLength).toBe(ERROR_BODY_MAX);
  });

  describe("the limiter's word on a retry", () => {
    /** A 429 with retry-after: 1, then a 529, then an answer; the settles answer `word`. Returns the Worker's pauses. */
    async function pausesWith(word: unknown) {
      const pauses: number[] = [];
      const answers = [
        new Response("{}", { status: 429, headers: { "retry-after": "1", "content-type": "application/json" } }),
        new Response("{}", { status: 529, headers: { "content-type": "application/json" } }),
        new Response('{"ok":1}', { headers: { "content-type": "application/json" } }),
      ];
      const { go } = setup(GRANT, (() => Promise.resolve(answers.shift()!)) as never, undefined, { deadline: Date.now() + 60_000 }, async (ms) => void pauses.push(ms), word);
      const res = await go();
      expect(res.status).toBe(200);
      return pauses;
    }

    it("now: the refused or faulted attempt comes back at once (the queue places it), not after the hint or a backoff", async () => {
      expect(await pausesWith({ retry: "now" })).toEqual([0, 0]);
    });

    it("wait, or no word (an object that says nothing): the provider's hint, then the Worker's own backoff", async () => {
      for (const word of [{ retry: "wait" }, undefined]) {
        const pauses = await pausesWith(word);
        expect(pauses[0]).toBe(1_000);
        expect(pauses[1]).toBeGreaterThan(0);
      }
    });
  });
});
