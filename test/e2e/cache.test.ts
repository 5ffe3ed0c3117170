// The response cache end to end: `wrangler dev` (its local R2 bucket and shard objects, no set-up)
// with CACHE=on, the official SDKs streaming through it. A streamed hit gives the same text and the
// same event sequence as the original, and makes no upstream call.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, OPENAI_MODEL, attemptsOf, credential, prompt, useStack } from "./setup.ts";

const stack = useStack({ admin: true, vars: { CACHE: "on" }, standin: { echo: true, latencyMs: 300, streamChunks: 6 } });

const headers = (ns: string) => ({ "x-slotgate-cache-namespace": ns });
const openai = (apiKey: string, ns: string) => new OpenAI({ apiKey, baseURL: `${stack.gateway.url}/openai/v1`, maxRetries: 0, defaultHeaders: headers(ns) });
const anthropic = (apiKey: string, ns: string) => new Anthropic({ apiKey, baseURL: `${stack.gateway.url}/anthropic`, maxRetries: 0, defaultHeaders: headers(ns) });

/** The index counts an entry once its bytes are in R2: wait for it before asking again. */
async function stored(ns: string): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    const res = await fetch(`${stack.gateway.url}/admin/cache`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = (await res.json()) as { namespaces: { namespace: string; entries: number }[] };
    if ((body.namespaces.find((n) => n.namespace === ns)?.entries ?? 0) > 0) return;
    if (Date.now() > end) throw new Error(`nothing stored in ${ns}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Run {
  text: string;
  events: unknown[];
  cache: string | null;
  cacheStatus: string | null;
}

const streams: { name: string; provider: "openai" | "anthropic"; run: (apiKey: string, ns: string, text: string) => Promise<Run> }[] = [
  {
    name: "openai chat.completions stream",
    provider: "openai",
    run: async (apiKey, ns, text) => {
      const { data, response } = await openai(apiKey, ns).chat.completions.create({ model: OPENAI_MODEL, messages: [{ role: "user", content: text }], stream: true }).withResponse();
      const events: unknown[] = [];
      let out = "";
      for await (const chunk of data) {
        events.push(chunk);
        out += chunk.choices[0]?.delta.content ?? "";
      }
      return { text: out, events, cache: response.headers.get("x-slotgate-cache"), cacheStatus: response.headers.get("cache-status") };
    },
  },
  {
    name: "openai responses stream",
    provider: "openai",
    run: async (apiKey, ns, text) => {
      const { data, response } = await openai(apiKey, ns).responses.create({ model: OPENAI_MODEL, input: text, stream: true }).withResponse();
      const events: unknown[] = [];
      let out = "";
      for await (const ev of data) {
        events.push(ev);
        if (ev.type === "response.output_text.delta") out += ev.delta;
      }
      return { text: out, events, cache: response.headers.get("x-slotgate-cache"), cacheStatus: response.headers.get("cache-status") };
    },
  },
  {
    name: "anthropic messages stream",
    provider: "anthropic",
    run: async (apiKey, ns, text) => {
      const { data, response } = await anthropic(apiKey, ns).messages.create({ model: ANTHROPIC_MODEL, max_tokens: 64, messages: [{ role: "user", content: text }], stream: true }).withResponse();
      const events: unknown[] = [];
      let out = "";
      for await (const ev of data) {
        events.push(ev);
        if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") out += ev.delta.text;
      }
      return { text: out, events, cache: response.headers.get("x-slotgate-cache"), cacheStatus: response.headers.get("cache-status") };
    },
  },
];

describe("cache through wrangler dev with CACHE=on", () => {
  for (const s of streams)
    it(`${s.name}: a streamed hit gives the same text and event sequence, with no upstream call`, async () => {
      const apiKey = credential(`cache-${s.provider}`);
      const ns = `e2e-${apiKey.slice(-12)}`;
      const text = prompt(s.name);
      const first = await s.run(apiKey, ns, text);
      expect([first.cache, first.cacheStatus]).toEqual(["miss", "slotgate; fwd=miss; stored"]);
      expect(first.text).toContain("Slotgate end to end check");
      expect(first.events.length).toBeGreaterThan(4);
      await stored(ns);
      const second = await s.run(apiKey, ns, text);
      expect([second.cache, second.cacheStatus]).toEqual(["hit", "slotgate; hit"]);
      expect(second.text).toBe(first.text);
      expect(second.events).toEqual(first.events);
      expect(attemptsOf(stack.standin.stats(), apiKey)).toHaveLength(1);
    });

  it("a plain (not streamed) answer is replayed too; another credential gets its own", async () => {
    const apiKey = credential("cache-plain");
    const ns = `e2e-${apiKey.slice(-12)}`;
    const ask = (key: string) => openai(key, ns).chat.completions.create({ model: OPENAI_MODEL, messages: [{ role: "user", content: prompt("plain") }] }).withResponse();
    const a = await ask(apiKey);
    await stored(ns);
    const b = await ask(apiKey);
    expect(b.response.headers.get("x-slotgate-cache")).toBe("hit");
    expect(b.data).toEqual(a.data);
    const other = credential("cache-other");
    const c = await ask(other);
    expect(c.response.headers.get("x-slotgate-cache")).toBe("miss");
    expect(attemptsOf(stack.standin.stats(), apiKey)).toHaveLength(1);
    expect(attemptsOf(stack.standin.stats(), other)).toHaveLength(1);
  });

  it("the Anthropic SDK's betas are part of the key: another beta is another entry, the same one a hit", async () => {
    const apiKey = credential("cache-betas");
    const ns = `e2e-${apiKey.slice(-12)}`;
    const ask = (beta: string) => anthropic(apiKey, ns).beta.messages
      .create({ model: ANTHROPIC_MODEL, max_tokens: 64, messages: [{ role: "user", content: prompt("betas") }], betas: [beta] })
      .withResponse();
    const a = await ask("feature-a-2025-01-01");
    expect(a.response.headers.get("x-slotgate-cache")).toBe("miss");
    await stored(ns);
    const b = await ask("feature-b-2025-01-01");
    expect(b.response.headers.get("x-slotgate-cache")).toBe("miss");
    expect(attemptsOf(stack.standin.stats(), apiKey)).toHaveLength(2);
    const again = await ask("feature-a-2025-01-01");
    expect(again.response.headers.get("x-slotgate-cache")).toBe("hit");
    expect(again.data).toEqual(a.data);
    expect(attemptsOf(stack.standin.stats(), apiKey)).toHaveLength(2);
  });
});
