import { describe, expect, it } from "vitest";
import { BUILT_IN } from "../../src/providers/table";
import { askForUsage, Meter, type UsageRecord } from "../../src/usage/meter";
import { priceTable } from "../../src/usage/prices";
import { anthropicMessage, openaiChat, openaiStream } from "./fixtures";

const openai = { name: "openai", ...BUILT_IN.openai! };
const mistral = { name: "mistral", ...BUILT_IN.mistral! };
const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

describe("asking an OpenAI stream for its usage", () => {
  it("adds stream_options.include_usage to a streamed chat completion, keeping the rest", () => {
    const body = { model: "gpt-4o-mini", stream: true, stream_options: { foo: 1 }, messages: [] };
    const { bytes, strip } = askForUsage(openai, "/v1/chat/completions", "", body, enc(body));
    expect(strip).toBe(true);
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ ...body, stream_options: { foo: 1, include_usage: true } });
  });

  it("leaves alone: a caller who asked, a plain request, another path, a provider not known to accept it", () => {
    const cases: [typeof openai, string, object][] = [
      [openai, "/v1/chat/completions", { stream: true, stream_options: { include_usage: true } }],
      [openai, "/v1/chat/completions", { stream: false }],
      [openai, "/v1/responses", { stream: true }],
      [mistral, "/v1/chat/completions", { stream: true }],
    ];
    for (const [p, rest, body] of cases) {
      const bytes = enc(body);
      const out = askForUsage(p, rest, "", body, bytes);
      expect(out.strip).toBe(false);
      expect(out.bytes).toBe(bytes);
    }
  });
});

describe("Meter", () => {
  const prices = priceTable(undefined);

  it("a plain answer: tokens, cost at the table, tags, and the counted callback once", () => {
    const seen: UsageRecord[] = [];
    const m = new Meter({ provider: "openai", model: "gpt-4o", prices, strip: false, counted: (r) => seen.push(r) });
    const r = m.plain(enc(openaiChat), { caller: "c", virtualKey: "vk" });
    expect(r).toMatchObject({ model: "gpt-4o", caller: "c", virtualKey: "vk", tokens: { input: 1117, output: 46, cached: 1024 } });
    expect(r.costUsd).toBeCloseTo((93 * 2.5 + 1024 * 1.25 + 46 * 10) / 1e6, 15);
    expect(seen).toEqual([r]);
  });

  it("unpriced model: tokens, null cost; not JSON: unknown", () => {
    const m = new Meter({ provider: "anthropic", model: "claude-unknown", prices, strip: false });
    expect(m.plain(enc(anthropicMessage))).toMatchObject({ tokens: { output: 503 }, costUsd: null });
    expect(m.plain(new TextEncoder().encode("<html>"))).toMatchObject({ tokens: null, costUsd: null });
  });

  it("a stream: stripped when the gateway asked, its record once it has ended", async () => {
    const m = new Meter({ provider: "openai", model: "gpt-4o-mini", prices, strip: true });
    const src = new Response(openaiStream(true)).body;
    const { body, record } = m.stream(src, true);
    const text = await new Response(body).text();
    expect(text).not.toContain("prompt_tokens");
    expect(record()).toMatchObject({ tokens: { input: 19, output: 10 }, costUsd: (19 * 0.15 + 10 * 0.6) / 1e6 });
    expect(m.stream(null, true).record()).toMatchObject({ tokens: null });
  });
});
