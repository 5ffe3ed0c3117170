// A virtual key held by someone you do not fully trust, tried as they would try it: through
// `wrangler dev`, with the official openai SDK holding only the virtual key, against a stand-in
// whose account has files, a model list, and identity headers like OpenAI's. Attacks 1 to 7 worked
// on the gateway before the trust work (issue 26): three requests took a pool down, a key listed
// the member's files, a second key replayed the first one's cached answers, labels made new
// limiters and multiplied the cap, and a budget let an unpriced model or a too-large request
// through. Attacks 8 to 11 worked before issue 33: a batch settled at $0, an image edit on a
// budget of a millionth of a dollar, another key's response continued, the member's organization
// in a 429, the admin token tested offline against a key's check characters. Attack 12 (issue 39),
// one request too large for a key a teammate uses, is in too-large.test.ts.
import { createHmac, randomBytes } from "node:crypto";
import OpenAI, { toFile } from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import { Admin, type MintedKey, type Pools, poolVars } from "../support/pools.ts";
import { ADMIN_TOKEN, OPENAI_MODEL, openaiVia, rejection, useStack } from "./setup.ts";

const secret = (label: string) => `sk-attack-${label}-${randomBytes(8).toString("hex")}`;
const SECRETS = { TEAM_A: secret("team-a"), TEAM_B: secret("team-b"), CAP_A: secret("cap-a"), CAP_B: secret("cap-b"), SOLO: secret("solo") };
const MODELS = ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-4.1-nano"];
/** A model the account has, named so the provider's own 429 for it ("Request too large for insufficient_quota ...") echoes the word. */
const TRAP = "insufficient_quota";
const POOLS: Pools = {
  team: { provider: "openai", members: [{ name: "team-a", secret: "TEAM_A" }, { name: "team-b", secret: "TEAM_B" }] },
  capped: { provider: "openai", members: [{ name: "cap-a", secret: "CAP_A" }, { name: "cap-b", secret: "CAP_B" }] },
  // One member that takes one request at a time: a second at once gets the provider's own 429, naming its organization.
  solo: { provider: "openai", members: [{ name: "solo", secret: "SOLO" }] },
};

const stack = useStack({
  admin: true,
  standin: { latencyMs: 150, echo: true, models: [...MODELS, TRAP], organization: "org-member-account", keyLimits: { [SECRETS.SOLO]: { maxConcurrent: 1 } } },
  vars: { ...poolVars(POOLS, SECRETS), POOL_OUT_MS: "60000" },
});

const admin = () => new Admin(stack.gateway.url, ADMIN_TOKEN);
let n = 0;
async function mint(pool: string, extra: Record<string, unknown> = {}): Promise<MintedKey> {
  const res = await admin().fetch("POST", "/admin/virtual-keys", { name: `attack-${++n}-${randomBytes(3).toString("hex")}`, pool, ...extra });
  expect(res.status).toBe(201);
  return (await res.json()) as MintedKey;
}
const ask = (client: OpenAI, text: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}, headers: Record<string, string> = {}) =>
  client.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 16, messages: [{ role: "user", content: text }], ...extra }, { headers });
const status = async (p: PromiseLike<unknown>) => (await rejection(p)) as InstanceType<typeof OpenAI.APIError>;

beforeEach(() => stack.standin.resetStats());

describe("attack 1: take a pool's members out for everyone", () => {
  it("a 429 whose message echoes insufficient_quota (the model it named) and a label picking the member limiter: the holder gets its 429s (413s once the members' limits are known) and 400s, the other team is served", async () => {
    const holder = openaiVia(stack, (await mint("team")).key);
    const victim = openaiVia(stack, (await mint("team")).key);
    // More than the stand-in's 200,000 TPM in one request: OpenAI's "Request too large for <model> ..." 429, rate_limit_exceeded,
    // given back as it is; once a member's limiter knows that limit, the gateway's 413 with nothing sent (too-large.test.ts).
    const trap = { model: TRAP, max_tokens: 1_000_000 };
    const once = { "x-slotgate-max-attempts": "1", "x-slotgate-deadline-ms": "3000" };
    for (let i = 0; i < 3; i++) {
      expect((await status(ask(holder, "take it down", trap, { "x-slotgate-limit-key": `member-${i}` }))).status).toBe(400);
      expect([413, 429]).toContain((await status(ask(holder, "take it down", trap, once))).status);
    }
    // The provider did answer it, naming the word: the member's own code (rate_limit_exceeded) is what decides.
    const echoed = stack.standin.stats().log.filter((a) => a.model === TRAP && a.status === 429);
    expect(echoed.length).toBeGreaterThan(0);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(victim, `victim ${i}`)));
    expect(answers.every((a) => a.choices[0]?.message.content?.includes("victim"))).toBe(true);
    const team = (await admin().pools()).pools.find((p) => p.name === "team")!;
    expect(team.members.map((m) => m.state)).toEqual(["in", "in"]);
  });
});

describe("attack 2: use the member's account with full power", () => {
  it("listing the account's files or its stored completions is 403, and nothing reaches the provider", async () => {
    const holder = openaiVia(stack, (await mint("team")).key);
    const files = await status(holder.files.list());
    expect(files.status).toBe(403);
    expect(files.message).toMatch(/needs the scope files/);
    expect((await status(holder.chat.completions.list())).status).toBe(403);
    expect(stack.standin.stats().log.filter((a) => a.path.endsWith("/files") || a.path.endsWith("/chat/completions"))).toEqual([]);
    // A key granted the files scope reaches its own files only (issue 33): not the account's, listed or by id.
    const granted = openaiVia(stack, (await mint("team", { scopes: ["inference", "files"] })).key);
    expect((await granted.files.list()).data).toEqual([]);
    expect((await status(granted.files.content("file-eval-answers"))).status).toBe(403);
    // A key granted all reaches the account's.
    const all = openaiVia(stack, (await mint("team", { scopes: ["all"] })).key);
    expect((await all.files.list()).data.map((f) => f.id)).toEqual(["file-eval-answers"]);
  });
});

describe("attack 3: read other virtual keys' cached answers", () => {
  it("a second key of the pool asking `only` for the first key's prompt gets a miss, not its answer", async () => {
    const a = openaiVia(stack, (await mint("team")).key);
    const b = openaiVia(stack, (await mint("team")).key);
    const ns = { "x-slotgate-cache": "on", "x-slotgate-cache-namespace": `oracle-${randomBytes(3).toString("hex")}` };
    await ask(a, "what team A asked in private", {}, ns);
    // Stored after the answer has gone out: wait until A itself can replay it.
    let stored = false;
    for (let i = 0; i < 50 && !stored; i++) {
      const replay = await a.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 16, messages: [{ role: "user", content: "what team A asked in private" }] }, { headers: { ...ns, "x-slotgate-cache": "only" } }).withResponse().catch(() => null);
      stored = replay?.response.headers.get("x-slotgate-cache") === "hit";
      if (!stored) await new Promise((r) => setTimeout(r, 100));
    }
    // It is there for A: B's miss below is the tenants kept apart, not an empty cache.
    expect(stored).toBe(true);
    const oracle = await status(ask(b, "what team A asked in private", {}, { ...ns, "x-slotgate-cache": "only" }));
    expect(oracle.status).toBe(504);
  });
});

describe("attack 4: bypass its caps and fill storage", () => {
  it("30 labels make no limiter; maxConcurrency 2 holds over two members and four models", async () => {
    const keysBefore = ((await (await admin().fetch("GET", "/admin/keys")).json()) as { total: number }).total;
    const holder = openaiVia(stack, (await mint("capped", { maxConcurrency: 2 })).key);
    for (let i = 0; i < 30; i++) expect((await status(ask(holder, "label", {}, { "x-slotgate-limit-key": `flood-${i}` }))).status).toBe(400);
    stack.standin.resetStats();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(holder, `capped ${i}`, { model: MODELS[i % 4] })));
    expect(answers).toHaveLength(12);
    expect(stack.standin.stats().peakInFlight).toBe(2);
    const keysAfter = ((await (await admin().fetch("GET", "/admin/keys")).json()) as { total: number; keys: { model: string }[] });
    expect(keysAfter.keys.filter((k) => k.model.startsWith("flood-"))).toEqual([]);
    // The capped pool's members each learned at most its four real models.
    expect(keysAfter.total - keysBefore).toBeLessThanOrEqual(8);
  });
});

describe("attack 5: spend without a budget", () => {
  it("an unpriced model is refused on a budgeted key, and so is a request that may cost more than is left", async () => {
    const holder = openaiVia(stack, (await mint("team", { budget: 0.005 })).key);
    expect((await status(ask(holder, "unpriced", { model: "gpt-4.1-nano-unpriced" }))).status).toBe(403);
    // gpt-4o-mini output is $0.60 per million: 100,000 tokens (bounded by its 16,384 maximum) may cost $0.0098, past the $0.005 budget.
    const big = await status(ask(holder, "expensive", { max_tokens: 100_000 }));
    expect(big.status).toBe(402);
    // So may a request that names no output limit at all: its model's maximum.
    expect((await status(ask(holder, "unbounded", { max_tokens: undefined }))).status).toBe(402);
    expect(stack.standin.stats().attempts).toBe(0);
    expect((await ask(holder, "cheap")).choices).toHaveLength(1);
  });
});

describe("attack 6: reach another key's batches and files", () => {
  it("a second key of the same pool, with the batches scope and every id, reads, downloads, cancels and lists none of the first's; nothing is sent", async () => {
    stack.standin.configure({ batchValidatingMs: 50, batchTurnaroundMs: 300, batchFinalizingMs: 50 });
    const holder = openaiVia(stack, (await mint("team", { scopes: ["inference", "batches"] })).key);
    const thief = openaiVia(stack, (await mint("team", { scopes: ["inference", "batches"] })).key);
    const line = JSON.stringify({ custom_id: "private-1", method: "POST", url: "/v1/chat/completions", body: { model: OPENAI_MODEL, max_tokens: 8, messages: [{ role: "user", content: "team A's secret eval" }] } });
    const file = await holder.files.create({ file: await toFile(Buffer.from(`${line}\n`), "input.jsonl"), purpose: "batch" });
    const batch = await holder.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    let done = batch;
    for (let i = 0; i < 100 && done.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      done = await holder.batches.retrieve(batch.id);
    }
    expect(done.output_file_id).toBeTruthy();
    expect(await (await holder.files.content(done.output_file_id!)).text()).toContain("private-1");
    stack.standin.resetStats();
    for (const attempt of [
      () => thief.batches.retrieve(batch.id), () => thief.batches.cancel(batch.id), () => thief.files.content(done.output_file_id!),
      () => thief.files.content(file.id), () => thief.files.retrieve(file.id), () => thief.files.delete(file.id),
      () => thief.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    ])
      expect((await status(attempt())).status).toBe(403);
    expect((await thief.batches.list()).data).toEqual([]);
    expect((await thief.files.list()).data).toEqual([]);
    // Nor does the holder reach the account's other files, or upload anything but batch input.
    expect((await holder.files.list()).data.map((f) => f.id).sort()).toEqual([file.id, done.output_file_id].sort());
    expect((await status(holder.files.content("file-eval-answers"))).status).toBe(403);
    expect((await status(holder.files.create({ file: await toFile(Buffer.from("x"), "x.jsonl"), purpose: "fine-tune" }))).status).toBe(403);
    expect(stack.standin.stats().attempts).toBe(0);
  });
});

describe("attack 7: learn who the member is", () => {
  it("no member organization, project or cookie on the holder's answers", async () => {
    const holder = openaiVia(stack, (await mint("team")).key);
    const { response } = await holder.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 8, messages: [{ role: "user", content: "who" }] }).withResponse();
    expect(response.headers.get("openai-organization")).toBeNull();
    expect(response.headers.get("openai-project")).toBeNull();
    // The stand-in does send them: a key of its own sees its organization.
    const own = await fetch(`${stack.standin.url}/v1/chat/completions`, {
      method: "POST", headers: { authorization: `Bearer ${SECRETS.TEAM_A}`, "content-type": "application/json" },
      body: JSON.stringify({ model: OPENAI_MODEL, max_tokens: 8, messages: [{ role: "user", content: "who" }] }),
    });
    expect(own.headers.get("openai-organization")).toBe("org-member-account");
  });
});

describe("attack 8: a budgeted batch settled at $0 (issue 33)", () => {
  it("its error file read first, then its output: the budget is charged what its answered lines cost", async () => {
    stack.standin.configure({ batchValidatingMs: 50, batchTurnaroundMs: 300, batchFinalizingMs: 50, batchFailRate: 0.5 });
    try {
      const m = await mint("team", { scopes: ["inference", "batches"], budget: 1 });
      const holder = openaiVia(stack, m.key);
      const lines = Array.from({ length: 8 }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: { model: OPENAI_MODEL, max_tokens: 8, messages: [{ role: "user", content: `line ${i}` }] } }));
      const file = await holder.files.create({ file: await toFile(Buffer.from(`${lines.join("\n")}\n`), "input.jsonl"), purpose: "batch" });
      let batch = await holder.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
      for (let i = 0; i < 100 && batch.status !== "completed"; i++) {
        await new Promise((r) => setTimeout(r, 50));
        batch = await holder.batches.retrieve(batch.id);
      }
      expect(batch.error_file_id).toBeTruthy();
      expect(batch.request_counts!.completed).toBeGreaterThan(0);
      await (await holder.files.content(batch.error_file_id!)).text();
      const output = (await (await holder.files.content(batch.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l) as { response: { body: { usage: { prompt_tokens: number; completion_tokens: number } } } });
      // gpt-4o-mini at batch prices: half of $0.15 in, $0.60 out per million.
      const cost = output.reduce((a, l) => a + (l.response.body.usage.prompt_tokens * 0.075 + l.response.body.usage.completion_tokens * 0.3) / 1e6, 0);
      let spend = { usd: 0, reservedUsd: 1 };
      for (let i = 0; i < 50 && spend.reservedUsd > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        spend = ((await (await admin().fetch("GET", "/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: typeof spend }[] }).virtualKeys.find((k) => k.name === m.name)!.spend;
      }
      expect(spend.reservedUsd).toBe(0);
      expect(spend.usd).toBeCloseTo(cost, 12);
    } finally {
      stack.standin.configure({ batchFailRate: 0 });
    }
  });
});

describe("attack 9: spend what a budget cannot see (issue 33)", () => {
  it("an image edit, a web search and a tier the table cannot price on a budget of a millionth of a dollar are 403, and nothing reaches the provider", async () => {
    const holder = openaiVia(stack, (await mint("team", { scopes: ["inference", "images"], budget: 0.000001 })).key);
    const edit = await status(holder.images.edit({ model: "gpt-image-1", image: await toFile(Buffer.from("png"), "a.png", { type: "image/png" }), prompt: "a cat" }));
    expect(edit.status).toBe(403);
    expect(edit.message).toMatch(/has a budget/);
    expect((await status(holder.responses.create({ model: OPENAI_MODEL, input: "news", tools: [{ type: "web_search" }] }))).status).toBe(403);
    expect((await status(ask(holder, "fast", { service_tier: "scale" }))).status).toBe(403);
    // Priority has a price (OpenAI's published ratio, issue 35): counted, and over this budget.
    expect((await status(ask(holder, "fast", { service_tier: "priority" }))).status).toBe(402);
    expect(stack.standin.stats().attempts).toBe(0);
  });
});

describe("attack 10: continue another key's conversation (issue 33)", () => {
  it("a previous_response_id the key never made is 403 and never sent; the key that made it continues it", async () => {
    const owner = openaiVia(stack, (await mint("team")).key);
    const thief = openaiVia(stack, (await mint("team")).key);
    const first = await owner.responses.create({ model: OPENAI_MODEL, input: "team A's private context", max_output_tokens: 16 });
    stack.standin.resetStats();
    expect((await status(thief.responses.create({ model: OPENAI_MODEL, input: "what did they say?", previous_response_id: first.id }))).status).toBe(403);
    expect(stack.standin.stats().attempts).toBe(0);
    expect((await owner.responses.create({ model: OPENAI_MODEL, input: "go on", previous_response_id: first.id, max_output_tokens: 16 })).id).toBeTruthy();
  });
});

describe("attack 11: learn who the member is, or the admin token (issue 33)", () => {
  it("the provider's 429 names the member's organization: the holder sees it cut out, and no quota or member header", async () => {
    const holder = openaiVia(stack, (await mint("solo")).key);
    const once = { "x-slotgate-max-attempts": "1" };
    // A new key's limiter lets one request go until its first answer: then three at once.
    await ask(holder, "warm");
    const answers = await Promise.allSettled(["one", "two", "three"].map((t) => ask(holder, t, {}, once)));
    const refused = answers.find((a) => a.status === "rejected");
    expect(refused, "one of three at once got the provider's 429").toBeDefined();
    const e = (refused as PromiseRejectedResult).reason as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(429);
    expect(JSON.stringify(e.error)).toContain("[redacted]");
    expect(JSON.stringify(e.error)).not.toContain("org-member-account");
    for (const h of Object.keys(Object.fromEntries(e.headers as unknown as Iterable<[string, string]>))) expect(h).not.toMatch(/ratelimit|^openai-organization|^x-slotgate-limit$/);
  });

  it("a key's check characters are no HMAC under the admin token: a holder cannot test guesses of it", async () => {
    const { key } = await mint("team");
    const tag = createHmac("sha256", ADMIN_TOKEN).update(key.slice(0, 48)).digest().subarray(0, 6).toString("base64url");
    expect(key.slice(48)).toHaveLength(8);
    expect(tag).not.toBe(key.slice(48));
  });
});
