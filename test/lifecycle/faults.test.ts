import { abortAllDurableObjects, createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import app from "../../src/index";
import type { Limiter } from "../../src/limiter/object";
import { CHAT, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stubFor = (key: string) => env.LIMITER.get(env.LIMITER.idFromName(key));

/** An upstream whose answers wait until the test opens the gate. */
function heldUpstream() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const mock = mockUpstream(async () => {
    await gate;
    return json(CHAT);
  });
  return { ...mock, open };
}

/** Learns a credential's key with one quick call, then caps its limit. */
async function keyWithLimit(credential: string, limit: number) {
  mockUpstream(() => json(CHAT));
  const key = (await chat({ key: credential })).headers.get("x-slotgate-key")!;
  // Its release rides its session, after the answer has gone back; the test starts from a key with nothing held.
  await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.inFlight).toBe(0));
  await stubFor(key).configure({ limit, maxConcurrency: limit });
  vi.restoreAllMocks();
  return key;
}

const CLEAN = (r: Response) => r.status === 200 || ((r.status === 429 || r.status === 503) && r.headers.has("retry-after"));

describe("the limiter restarts while requests wait and hold slots", () => {
  it.each([["aborted", () => abortAllDurableObjects()]])("%s: every caller still gets a clean answer, and what was learned survives", async (_, restart) => {
    const key = await keyWithLimit(`sk-restart-${_}`, 2);
    const before = await stubFor(key).state();
    await runInDurableObject(stubFor(key), (obj: Limiter) => {
      (obj as unknown as { tag?: string }).tag = "before the restart";
    });
    const up = heldUpstream();
    const callers = Array.from({ length: 5 }, () => chat({ key: `sk-restart-${_}` }));
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.queued).toBe(3));
    await restart();
    // A new instance answers now: the restart really happened.
    expect(await runInDurableObject(stubFor(key), (obj: Limiter) => (obj as unknown as { tag?: string }).tag)).toBeUndefined();
    up.open();
    const answers = await Promise.all(callers);
    expect(answers.every(CLEAN)).toBe(true);
    expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2);
    const after = await stubFor(key).state();
    expect(after.concurrency.limit).toBe(2);
    expect(after.history).toEqual(before.history);
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.inFlight).toBe(0));
  });
});

describe("callers that leave", () => {
  it("a caller that disconnects mid-stream frees its slot, and the next waiter goes", async () => {
    const key = await keyWithLimit("sk-leaves-stream", 1);
    const enc = new TextEncoder();
    mockUpstream(() =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(enc.encode("data: {}\n\n")) }), { headers: { "content-type": "text/event-stream" } }),
    );
    const first = await chat({ key: "sk-leaves-stream", body: { model: "gpt-4o-mini", stream: true } });
    const reader = first.body!.getReader();
    await reader.read();
    const second = chat({ key: "sk-leaves-stream", headers: { "x-slotgate-deadline-ms": "4000" }, body: { model: "gpt-4o-mini", stream: true } });
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.queued).toBe(1));
    await reader.cancel();
    // Without the freed slot this one could only end as a queue_timeout: the first never ends by itself.
    const next = await second;
    expect(next.status).toBe(200);
    expect(next.headers.get("x-slotgate-attempts")).toBe("1");
    await next.body!.cancel();
  });

  it("a caller that stops reading a stream (but stays) is cut after STREAM_IDLE_MS: its slot goes back, the provider's stream is cancelled (issue 33)", async () => {
    const enc = new TextEncoder();
    let cancelled = false;
    // A provider that streams for as long as anyone reads.
    mockUpstream(() =>
      new Response(new ReadableStream({ pull: (c) => c.enqueue(enc.encode(`data: ${JSON.stringify({ choices: [{ delta: { content: "x".repeat(4_000) } }] })}\n\n`)), cancel: () => void (cancelled = true) }), {
        headers: { "content-type": "text/event-stream" },
      }),
    );
    const vars = { ...env, STREAM_IDLE_MS: "300" };
    const res = await app.fetch(
      new Request("http://gateway/openai/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer sk-stops-reading", "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [] }) }),
      vars, createExecutionContext(),
    );
    expect(res.status).toBe(200);
    const key = res.headers.get("x-slotgate-key")!;
    const reader = res.body!.getReader();
    await reader.read();
    // It never reads again, and never leaves.
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.inFlight).toBe(1));
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.inFlight).toBe(0), { timeout: 3_000 });
    expect(cancelled).toBe(true);
    // What it reads now ends in an error, never a clean end.
    await expect((async () => {
      for (;;) if ((await reader.read()).done) return "clean end";
    })()).rejects.toThrow(/STREAM_IDLE_MS/);
  });

  it("a caller that disconnects while queued leaves the queue and is never sent", async () => {
    const key = await keyWithLimit("sk-leaves-queue", 1);
    const up = heldUpstream();
    const holder = chat({ key: "sk-leaves-queue" });
    await vi.waitFor(() => expect(up.calls).toHaveLength(1));
    const ctrl = new AbortController();
    const leaving = exports.default
      .fetch("http://gateway/openai/v1/chat/completions", {
        method: "POST",
        signal: ctrl.signal,
        headers: { authorization: "Bearer sk-leaves-queue", "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [] }),
      })
      .catch(() => null);
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.queued).toBe(1));
    ctrl.abort();
    await leaving;
    await vi.waitFor(async () => expect((await stubFor(key).state()).concurrency.queued).toBe(0), { timeout: 1_000 });
    up.open();
    expect((await holder).status).toBe(200);
    await sleep(50);
    expect(up.calls).toHaveLength(1);
  });
});
