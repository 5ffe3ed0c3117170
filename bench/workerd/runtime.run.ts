// What workerd charges for the primitives a request through the gateway uses, each many times on
// one representative chat completion, inside workerd: headers copied, a Response made or re-made,
// an answer read whole or passed through (a native pass-through, a TransformStream tap, a JS pull
// stream like AttemptTimer.watch), timers, SHA-256, JSON, URLs. Prints a markdown table (µs an
// operation); asserts only that each ran. Issue 40's profile (bench/PROFILE-40.md) reads it.
//   npx vitest run --config bench/vitest.workerd.config.ts bench/workerd/runtime.run.ts
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { Env } from "../../src/env";
import { ANSWER as ANSWER_TEXT, BODY, BYTES, UPSTREAM } from "./sample";

const RUNS = Number(globalThis.process?.env?.RUNTIME_RUNS ?? 30_000);
const CALLER = {
  authorization: "Bearer sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH",
  "content-type": "application/json",
  "user-agent": "OpenAI/JS 6.9.0",
  "x-stainless-lang": "js",
  "x-stainless-package-version": "6.9.0",
  "x-stainless-os": "Linux",
  "x-stainless-arch": "x64",
  "x-stainless-runtime": "node",
  "x-stainless-runtime-version": "v24.21.0",
  "x-stainless-retry-count": "0",
  "x-stainless-timeout": "600",
  accept: "application/json",
};
const ANSWER = new TextEncoder().encode(ANSWER_TEXT);

/** workerd's clock moves only at I/O: a timer before and after the runs lets it read the time between. */
const tick = () => new Promise((r) => setTimeout(r, 0));

async function once(n: number, fn: () => unknown): Promise<number> {
  await tick();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  await tick();
  return ((performance.now() - t0) / n) * 1_000;
}

/** ROUNDS slices of the runs, each op's slices interleaved with the others'; the quickest slice, as the machine is shared. */
const ROUNDS = 10;

async function measure(ops: [string, () => unknown][]): Promise<[string, number][]> {
  for (const [, fn] of ops) for (let i = 0; i < 300; i++) await fn();
  const best = ops.map(() => Number.POSITIVE_INFINITY);
  for (let r = 0; r < ROUNDS; r++) for (const [i, [, fn]] of ops.entries()) best[i] = Math.min(best[i]!, await once(Math.ceil(RUNS / ROUNDS), fn));
  return ops.map(([name], i) => [name, best[i]!]);
}

const answer = () => new Response(ANSWER, { headers: UPSTREAM });

async function readAll(body: ReadableStream<Uint8Array> | null): Promise<number> {
  if (!body) return 0;
  const reader = body.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    n += value.byteLength;
  }
}

/** A JS pull stream over another, as AttemptTimer.watch wraps an answer (a timer per read). */
function watched(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const timer = setTimeout(() => {}, 120_000);
      const chunk = await reader.read();
      clearTimeout(timer);
      if (chunk.done) c.close();
      else c.enqueue(chunk.value);
    },
  });
}

it("what the runtime charges a request's primitives", async () => {
  const e = env as unknown as Env;
  const caller = new Headers(CALLER);
  const upstream = new Headers(UPSTREAM);
  const url = "https://gw.example/openai/v1/chat/completions";
  const rows = await measure([
    ["new Request (POST, 12 headers, the body)", () => new Request(url, { method: "POST", headers: CALLER, body: BODY })],
    ["new Headers(12 caller headers): a copy", () => new Headers(caller)],
    ["12 caller headers copied one by one (for ... of, set)", () => {
      const out = new Headers();
      for (const [k, v] of caller) out.set(k, v);
    }],
    ["headers.set, one", () => upstream.set("x-slotgate-key", "openai:gpt-4o-mini:0123456789abcdef")],
    ["headers.get, one", () => caller.get("x-slotgate-limit-key")],
    ["new Response(bytes, {headers}) (the answer re-made)", () => new Response(ANSWER, { status: 200, headers: upstream })],
    ["new Response(res.body, res) (an answer re-wrapped, its body passed on)", () => {
      const r = answer();
      return new Response(r.body, r);
    }],
    ["an answer read whole (getReader, read to the end)", () => readAll(answer().body)],
    ["an answer read whole through a JS pull stream with a timer a read (AttemptTimer.watch)", () => readAll(watched(answer().body!))],
    ["an answer passed through a TransformStream tap, read to the end", () => {
      let seen = 0;
      return readAll(answer().body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (c, out) => ((seen += c.byteLength), out.enqueue(c)) })));
    }],
    ["an answer tee()d, both halves read", () => {
      const [a, b] = answer().body!.tee();
      return Promise.all([readAll(a), readAll(b)]);
    }],
    ["setTimeout + clearTimeout", () => clearTimeout(setTimeout(() => {}, 60_000))],
    ["AbortController + addEventListener + removeEventListener", () => {
      const c = new AbortController();
      const f = () => {};
      c.signal.addEventListener("abort", f);
      c.signal.removeEventListener("abort", f);
    }],
    ["AbortSignal.any of two", () => AbortSignal.any([new AbortController().signal, new AbortController().signal])],
    ["crypto.subtle.digest SHA-256 of a credential, to 16 hex", async () => {
      const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(CALLER.authorization));
      return [...new Uint8Array(d, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
    }],
    ["crypto.randomUUID", () => crypto.randomUUID()],
    ["JSON.parse of the request body (decode + parse)", () => JSON.parse(new TextDecoder().decode(BYTES))],
    ["JSON.stringify of the parsed body + encode", () => new TextEncoder().encode(JSON.stringify(JSON.parse(BODY)))],
    ["JSON.parse of the answer (decode + parse)", () => JSON.parse(new TextDecoder().decode(ANSWER))],
    ["new URL of the request", () => new URL(url)],
    ["LIMITER.idFromName + get (a stub, no call)", () => e.LIMITER.get(e.LIMITER.idFromName("openai:gpt-4o-mini:0123456789abcdef"))],
  ]);
  console.log([`| primitive (workerd, ${RUNS} runs each in ${ROUNDS} slices, the quickest slice) | µs each |`, "| --- | --- |", ...rows.map(([n, v]) => `| ${n} | ${v.toFixed(1)} |`)].join("\n"));
  expect(rows.every(([, v]) => Number.isFinite(v))).toBe(true);
});
