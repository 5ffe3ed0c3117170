// Every built-in provider in its own dialect through `wrangler dev` (issue 32): usage metered
// exactly in the ledger (streams included), billing refusals and daily caps back to the caller
// after one attempt, a pool member without balance out after its first refusal, capacity refusals
// retried, a held answer passed through as it comes. The stand-in plays each provider as it
// documents itself (test/support/standin/README.md); the clients are the ones its users have.
import type OpenAI from "openai";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Admin, poolVars } from "../support/pools.ts";
import type { OpenAiStyle } from "../support/standin/index.ts";
import { azureOf, fleet, geminiNative, ledger, openaiOf, statusOf, useProviderStack } from "./providers-setup.ts";
import { ADMIN_TOKEN, credential } from "./setup.ts";

const secret = (label: string) => `sk-ds-${label}-${randomBytes(8).toString("hex")}`;
const POOL_KEYS = { DS_KEY_OK: secret("ok"), DS_KEY_BROKE: secret("broke") };
const stack = useProviderStack(
  { latencyMs: 20, streamChunks: 3, outputTokens: 9, quotaExhaustedKeys: [POOL_KEYS.DS_KEY_BROKE] },
  poolVars({ deepseek: { provider: "deepseek", members: [{ name: "broke", secret: "DS_KEY_BROKE" }, { name: "ok", secret: "DS_KEY_OK" }] } }, POOL_KEYS),
);
const USER = [{ role: "user" as const, content: "Count these words through the gateway please" }];
const OPENAI_STYLE: Exclude<OpenAiStyle, "openai">[] = ["groq", "mistral", "openrouter", "deepseek", "together", "fireworks", "xai", "gemini"];

describe("usage metered exactly, every provider", () => {
  it("a plain answer and a stream (usage not asked by the caller) per provider: the ledger holds what the answers reported", async () => {
    const since = Date.now() - 60_000;
    const before = stack.standin.stats().usage;
    const expected: Record<string, { input: number; output: number }> = {};
    const tag = randomBytes(3).toString("hex");
    for (const p of OPENAI_STYLE) {
      const client = openaiOf(stack, p, credential(`usage-${p}`));
      const model = `${p}-ledger-${tag}`;
      const plain = await client.chat.completions.create({ model, messages: USER });
      let text = "";
      for await (const c of await client.chat.completions.create({ model, messages: USER, stream: true })) {
        text += c.choices[0]?.delta.content ?? "";
        // A usage-only chunk is the one a gateway asks for on the caller's behalf: it must not reach a caller who did not.
        expect(c.choices.length > 0 || !c.usage, `${p}: a usage chunk the caller did not ask for`).toBe(true);
      }
      expect(text.split(" ")).toHaveLength(9);
      // The same prompt costs the same: the stream's usage is the plain answer's.
      expected[model] = { input: 2 * plain.usage!.prompt_tokens, output: 2 * plain.usage!.completion_tokens };
    }
    const gKey = credential("usage-gemini-native");
    const gModel = `gemini-native-${tag}`;
    const plain = (await (await geminiNative(stack, gKey, gModel, "generateContent", "count me")).json()) as { usageMetadata: { promptTokenCount: number; candidatesTokenCount: number } };
    const sse = await geminiNative(stack, gKey, gModel, "streamGenerateContent", "count me");
    expect(sse.status).toBe(200);
    await sse.text();
    expected[gModel] = { input: 2 * plain.usageMetadata.promptTokenCount, output: 2 * plain.usageMetadata.candidatesTokenCount };
    const azModel = `az-ledger-${tag}`;
    const az = azureOf(stack, credential("usage-azure"), azModel);
    const azPlain = await az.chat.completions.create({ model: "x", messages: USER });
    for await (const _ of await az.chat.completions.create({ model: "x", messages: USER, stream: true }));
    expected[azModel] = { input: 2 * azPlain.usage!.prompt_tokens, output: 2 * azPlain.usage!.completion_tokens };

    const rows = await ledger(stack, since, Object.fromEntries(Object.keys(expected).map((m) => [m, 2])));
    const got = Object.fromEntries(Object.keys(expected).map((m) => [m, rows[m] && { requests: rows[m].requests, unknownUsage: rows[m].unknownUsage, input: rows[m].inputTokens, output: rows[m].outputTokens }]));
    const want = Object.fromEntries(Object.entries(expected).map(([m, u]) => [m, { requests: 2, unknownUsage: 0, ...u }]));
    expect(got).toEqual(want);
    // And the stand-in reported (served) exactly that: every stream was asked for its usage where its provider needs asking.
    const after = stack.standin.stats().usage;
    const sum = Object.values(expected).reduce((a, u) => ({ input: a.input + u.input, output: a.output + u.output }), { input: 0, output: 0 });
    expect({ input: after.input - before.input, output: after.output - before.output }).toEqual(sum);
  });
});

/** One request that the provider refuses for money or a cap: its status, the time it took, and the attempts upstream. */
async function refusedOnce(key: string, send: () => Promise<number>) {
  const t = Date.now();
  const status = await send();
  return { status, ms: Date.now() - t, attempts: stack.standin.stats().byCredential[key]?.attempts ?? 0 };
}

describe("spent credits, balances and daily caps: back to the caller after one attempt, within a second", () => {
  const chatAs = (p: OpenAiStyle, key: string) => () => statusOf(openaiOf(stack, p, key).chat.completions.create({ model: `${p}-spent`, messages: USER }));

  it("xAI's spent credits (a 429 with a string error), DeepSeek's and OpenRouter's 402, Fireworks' monthly budget, a Gemini key out of its day", async () => {
    const keys = { xai: credential("xai-spent"), deepseek: credential("ds-broke"), openrouter: credential("or-broke"), fireworks: credential("fw-budget"), gemini: credential("g-spent") };
    stack.standin.configure({ quotaExhaustedKeys: [POOL_KEYS.DS_KEY_BROKE, ...Object.values(keys)] });
    const got = {
      xai: await refusedOnce(keys.xai, chatAs("xai", keys.xai)),
      deepseek: await refusedOnce(keys.deepseek, chatAs("deepseek", keys.deepseek)),
      openrouter: await refusedOnce(keys.openrouter, chatAs("openrouter", keys.openrouter)),
      fireworks: await refusedOnce(keys.fireworks, chatAs("fireworks", keys.fireworks)),
      gemini: await refusedOnce(keys.gemini, () => geminiNative(stack, keys.gemini, "gemini-2.5-flash", "generateContent", "hi").then(async (r) => (await r.arrayBuffer(), r.status))),
    };
    const status = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, [v.status, v.attempts]]));
    expect(status).toEqual({ xai: [429, 1], deepseek: [402, 1], openrouter: [402, 1], fireworks: [402, 1], gemini: [429, 1] });
    for (const [p, v] of Object.entries(got)) expect(v.ms, `${p} answered after ${v.ms} ms`).toBeLessThan(1_000);
  });

  it("daily and monthly caps: OpenRouter's free-models-per-day, Gemini's requests per day, Mistral's monthly tokens", async () => {
    const keys = { openrouter: credential("or-day"), gemini: credential("g-day"), mistral: credential("mi-month") };
    stack.standin.configure({ keyLimits: { [keys.openrouter]: { rpd: 1 }, [keys.gemini]: { rpd: 1 }, [keys.mistral]: { monthlyTokens: 40 } } });
    const gemini = () => geminiNative(stack, keys.gemini, "gemini-2.5-flash", "generateContent", "hi").then(async (r) => (await r.arrayBuffer(), r.status));
    const mistral = () => statusOf(openaiOf(stack, "mistral", keys.mistral).chat.completions.create({ model: "mistral-month", max_tokens: 20, messages: USER }));
    expect([await chatAs("openrouter", keys.openrouter)(), await gemini(), await mistral()]).toEqual([200, 200, 200]);
    const got = {
      openrouter: await refusedOnce(keys.openrouter, chatAs("openrouter", keys.openrouter)),
      gemini: await refusedOnce(keys.gemini, gemini),
      mistral: await refusedOnce(keys.mistral, mistral),
    };
    // The first request went up and was answered; the refused one at most once (a gateway that read the month's remaining may refuse it unsent).
    expect(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, [v.status, v.attempts <= 2]]))).toEqual({ openrouter: [429, true], gemini: [429, true], mistral: [429, true] });
    for (const [p, v] of Object.entries(got)) expect(v.ms, `${p} answered after ${v.ms} ms`).toBeLessThan(1_000);
  });

  it("a DeepSeek pool: the member without balance is out after its first refusal, the other serves every caller", async () => {
    const admin = new Admin(stack.gateway.url, ADMIN_TOKEN);
    const vk = await admin.mint("ds-vk", "deepseek");
    const client = openaiOf(stack, "deepseek", vk.key);
    const run = await fleet(30, 6, () => statusOf(client.chat.completions.create({ model: "deepseek-chat", messages: USER })));
    const by = stack.standin.stats().byCredential;
    expect(by[POOL_KEYS.DS_KEY_BROKE]?.attempts, "the broke member was tried once").toBe(1);
    const statuses = run.sent.map((s) => s.status);
    expect(statuses.filter((s) => s === 200).length, `statuses ${statuses.join(",")}`).toBeGreaterThanOrEqual(29);
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
  });
});

describe("capacity refused, held answers", () => {
  it("Together's 503 below its dynamic rate is retried: every request answered", async () => {
    stack.standin.configure({ faults: { "503": 0.3 } });
    try {
      const client = openaiOf(stack, "together", credential("together-503"));
      const run = await fleet(12, 4, () => statusOf(client.chat.completions.create({ model: "together-model", messages: USER })));
      expect(run.sent.map((s) => s.status).filter((s) => s !== 200)).toEqual([]);
      expect(stack.standin.stats().faults["503"] ?? 0).toBeGreaterThan(0);
    } finally {
      stack.standin.configure({ faults: {} });
    }
  });

  it("DeepSeek holding an answer with keep-alive lines: the caller gets the headers at once and the body as it comes", async () => {
    stack.standin.configure({ heldMs: 1_500, keepAliveMs: 100 });
    try {
      const key = credential("ds-held");
      const t = Date.now();
      const res = await fetch(`${stack.gateway.url}/deepseek/chat/completions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "deepseek-chat", messages: USER }),
      });
      const headersMs = Date.now() - t;
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(headersMs, "headers before the answer was made").toBeLessThan(750);
      expect(body).toMatch(/^\n+\{/);
      expect((JSON.parse(body) as OpenAI.ChatCompletion).choices[0]!.message.content!.split(" ")).toHaveLength(9);
      // The SDK reads the same held answer.
      const parsed = await openaiOf(stack, "deepseek", key).chat.completions.create({ model: "deepseek-chat", messages: USER });
      expect(parsed.object).toBe("chat.completion");
    } finally {
      stack.standin.configure({ heldMs: 0 });
    }
  });
});
