// The Vercel AI SDK (`ai`, `@ai-sdk/openai`, `@ai-sdk/anthropic`) exactly as its users write it, only
// the base URL changed, through `wrangler dev` to the stand-in: `openai(model)` (the Responses API,
// the provider's default), `openai.chat(model)` (Chat Completions) and `anthropic(model)` (Messages),
// each with generateText and streamText. The text arrives whole, the AI SDK's own usage is what the
// provider counted, the ledger holds the same tokens, and callers sharing one key at its limit are
// paced inside the gateway: none sees a 429 with the AI SDK's own retries off.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, type LanguageModel, type LanguageModelUsage, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, OPENAI_MODEL, attemptsOf, credential, prompt, type Stack, useStack } from "./setup.ts";

const STREAM_CHUNKS = 5;
const stack = useStack({ admin: true, standin: { echo: true, latencyMs: 150, streamChunks: STREAM_CHUNKS }, vars: { USAGE_FLUSH_MS: "200" } });

/** The providers as the README writes them: the gateway's base URL, the caller's own key. */
const openaiVia = (s: Stack, apiKey: string) => createOpenAI({ baseURL: `${s.gateway.url}/openai/v1`, apiKey });
const anthropicVia = (s: Stack, apiKey: string) => createAnthropic({ baseURL: `${s.gateway.url}/anthropic/v1`, apiKey });

interface Api {
  name: string;
  provider: "openai" | "anthropic";
  /** The path the AI SDK calls at the provider. */
  path: string;
  model: (apiKey: string) => LanguageModel;
}

const APIS: Api[] = [
  { name: "openai(model), the Responses API", provider: "openai", path: "/v1/responses", model: (k) => openaiVia(stack, k)(OPENAI_MODEL) },
  { name: "openai.chat(model), Chat Completions", provider: "openai", path: "/v1/chat/completions", model: (k) => openaiVia(stack, k).chat(OPENAI_MODEL) },
  { name: "anthropic(model), Messages", provider: "anthropic", path: "/v1/messages", model: (k) => anthropicVia(stack, k)(ANTHROPIC_MODEL) },
];

interface Answer {
  text: string;
  usage: LanguageModelUsage;
  headers: Record<string, string> | undefined;
  /** streamText: the text deltas as they came. */
  pieces?: string[];
}

async function generate(model: LanguageModel, text: string): Promise<Answer> {
  const r = await generateText({ model, prompt: text, maxOutputTokens: 64, maxRetries: 0 });
  return { text: r.text, usage: r.usage, headers: r.response.headers };
}

async function stream(model: LanguageModel, text: string): Promise<Answer> {
  const errors: unknown[] = [];
  const r = streamText({ model, prompt: text, maxOutputTokens: 64, maxRetries: 0, onError: ({ error }) => void errors.push(error) });
  const pieces: string[] = [];
  for await (const piece of r.textStream) pieces.push(piece);
  if (errors.length) throw errors[0];
  return { text: await r.text, usage: await r.usage, headers: (await r.response).headers, pieces };
}

const CALLS = { generateText: generate, streamText: stream } as const;

/** What the ledger holds per limiter key over the file's run. */
type KeyRow = { key: string; requests: number; inputTokens: number; outputTokens: number; unknownUsage: number };
const since = Date.now() - 60_000;
async function ledgerByKey(): Promise<Map<string, KeyRow>> {
  const res = await fetch(`${stack.gateway.url}/admin/usage?since=${since}&by=key`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  const { rows } = (await res.json()) as { rows: KeyRow[] };
  // Minute rows: a key's calls may straddle a minute.
  const byKey = new Map<string, KeyRow>();
  for (const r of rows) {
    const k = byKey.get(r.key) ?? { key: r.key, requests: 0, inputTokens: 0, outputTokens: 0, unknownUsage: 0 };
    byKey.set(r.key, { key: r.key, requests: k.requests + r.requests, inputTokens: k.inputTokens + r.inputTokens, outputTokens: k.outputTokens + r.outputTokens, unknownUsage: k.unknownUsage + r.unknownUsage });
  }
  return byKey;
}

/** What each limiter key's callers were told they used (the AI SDK's own usage), summed; checked against the ledger at the end. */
const told = new Map<string, { requests: number; input: number; output: number }>();
function tell(key: string, usage: LanguageModelUsage): void {
  const t = told.get(key) ?? { requests: 0, input: 0, output: 0 };
  told.set(key, { requests: t.requests + 1, input: t.input + (usage.inputTokens ?? 0), output: t.output + (usage.outputTokens ?? 0) });
}

// One at a time: the stand-in's usage counter is global, so each call's tokens are its delta.
describe("one caller: the text whole, the AI SDK's usage what the provider counted", () => {
  const cases = APIS.flatMap((api) => (["generateText", "streamText"] as const).map((call) => ({ ...api, call, label: `${call} with ${api.name}` })));
  it.each(cases)("$label", async ({ provider, path, model, call, label }) => {
    const apiKey = credential(`aisdk-${provider}`);
    const before = stack.standin.stats().usage;
    const answer = await CALLS[call](model(apiKey), prompt(label));
    const after = stack.standin.stats().usage;

    expect(answer.text).toBe(prompt(label)); // the stand-in echoes the prompt
    if (answer.pieces) expect(answer.pieces.filter(Boolean)).toHaveLength(STREAM_CHUNKS); // streamed, not one lump
    const counted = { input: after.input - before.input, output: after.output - before.output };
    expect(counted.output).toBe(prompt(label).split(" ").length);
    // openai.chat's streamText asks for `stream_options.include_usage` itself: the gateway must pass
    // that usage chunk through (it strips only the one it asked for), or the AI SDK's usage is undefined.
    expect({ input: answer.usage.inputTokens, output: answer.usage.outputTokens }).toEqual(counted);

    const seen = attemptsOf(stack.standin.stats(), apiKey);
    expect(seen.map((a) => [a.provider, a.path, a.stream, a.status])).toEqual([[provider, path, call === "streamText", 200]]);
    const key = answer.headers?.["x-slotgate-key"] ?? "";
    expect(key).toMatch(new RegExp(`^${provider}:`));
    tell(key, answer.usage);
  });
});

describe("callers sharing one key at its limit", () => {
  it("4 AI SDK callers, 3 at a time each, against 600 RPM in a bucket of 4: all answered, no 429 reaches the AI SDK", async () => {
    const apiKey = credential("aisdk-shared");
    // This credential alone: 10 requests a second after a burst of 4.
    stack.standin.configure({ keyLimits: { [apiKey]: { rpm: 600, burst: { requests: 4 } } } });
    const callers = 4;
    const each = 6;
    const models = Array.from({ length: callers }, () => openaiVia(stack, apiKey).chat(OPENAI_MODEL));
    const before = stack.standin.stats().usage;
    const t0 = Date.now();
    const outcomes = await Promise.all(
      models.flatMap((model, c) => {
        let next = 0;
        const worker = async () => {
          const out: { ok: boolean; error?: string; key?: string; usage?: LanguageModelUsage }[] = [];
          while (next < each) {
            const i = next++;
            const text = prompt(`caller ${c} request ${i}`);
            // Odd requests stream: both paths share the limiter.
            const answer = await CALLS[i % 2 ? "streamText" : "generateText"](model, text).then(
              (a) => a,
              (e: unknown) => ({ error: String(e) }),
            );
            if ("error" in answer) out.push({ ok: false, error: answer.error });
            else out.push({ ok: answer.text === text, key: answer.headers?.["x-slotgate-key"], usage: answer.usage });
          }
          return out;
        };
        return Array.from({ length: 3 }, worker);
      }),
    ).then((w) => w.flat());
    const elapsed = Date.now() - t0;
    const log = attemptsOf(stack.standin.stats(), apiKey);
    const upstream429 = log.filter((a) => a.status === 429).length;
    console.info(`[aisdk] ${outcomes.length} calls from ${callers} AI SDK callers in ${elapsed} ms; upstream attempts ${log.length}, 429s ${upstream429}`);

    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes).toHaveLength(callers * each);
    expect(new Set(outcomes.map((o) => o.key)).size).toBe(1); // one key, one limiter
    // 24 requests at 10 a second after 4: the limit did bind, and the gateway held the callers.
    expect(elapsed).toBeGreaterThanOrEqual(((callers * each - 4) / 10) * 1000 - 300);
    expect(log.filter((a) => a.status === 200)).toHaveLength(callers * each);
    const after = stack.standin.stats().usage;
    const sum = (f: (u: LanguageModelUsage) => number | undefined) => outcomes.reduce((n, o) => n + (f(o.usage!) ?? 0), 0);
    expect({ input: sum((u) => u.inputTokens), output: sum((u) => u.outputTokens) }).toEqual({ input: after.input - before.input, output: after.output - before.output });
    for (const o of outcomes) tell(o.key!, o.usage!);
  });
});

describe("the ledger", () => {
  it("holds, per key, the tokens the AI SDK reported to its callers, streams included", async () => {
    let got = new Map<string, KeyRow>();
    const want = [...told.values()].reduce((n, t) => n + t.requests, 0);
    expect(want).toBe(6 + 24);
    const end = Date.now() + 10_000;
    while (Date.now() < end) {
      got = await ledgerByKey();
      const have = [...told.keys()].reduce((n, k) => n + (got.get(k)?.requests ?? 0), 0);
      if (have >= want) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const [key, t] of told) {
      const row = got.get(key);
      expect({ key, requests: row?.requests, input: row?.inputTokens, output: row?.outputTokens, unknown: row?.unknownUsage }).toEqual({
        key, requests: t.requests, input: t.input, output: t.output, unknown: 0,
      });
    }
  });
});
