// One Claude model on three clouds in one pool (issue 41, item 6): an Anthropic member, a Bedrock
// member and a Vertex member serve `/anthropic/v1/messages` for a virtual key. Each member's request
// is its provider's own (Bedrock's InvokeModel, Vertex's rawPredict), each answer comes back as the
// Anthropic SDK reads it (Bedrock's event stream as server-sent events), is priced at its member's
// price in the ledger, and a budget reserves at the dearest of them.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { forgetViews } from "../../src/pools/route";
import { callWith } from "../support/app";
import {
  ACCESS_KEY_ID, ACCESS_TOKEN, adminGet, ANTHROPIC_KEY, BEDROCK_ID, type Cloud, cloudOf, cloudsUpstream, cloudVars, claudeEvents, eventStreamOf, mintIn, MODEL, type Said,
  throttled, VERTEX_ID,
} from "../support/clouds";
import { mockUpstream } from "../support/upstream";

let vars: Record<string, unknown>;
beforeAll(async () => {
  // A contract price for Claude on Vertex (PRICES), so each member's price differs: Anthropic's list
  // price, Bedrock's regional premium (providers/prices.ts), Vertex's own.
  vars = { ...(await cloudVars()), PRICES: JSON.stringify({ [`vertex:${MODEL}`]: { input: 0.9, output: 4.5 } }) };
});
beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

/** USD per million tokens each member's answers are priced at. */
const RATES: Record<Cloud, { input: number; output: number }> = { ant: { input: 1, output: 5 }, aws: { input: 1.1, output: 5.5 }, gcp: { input: 0.9, output: 4.5 } };
/** Each member says the same words with its own counts, so the ledger's rows tell them apart. */
const SAID: Record<Cloud, Said> = { ant: { text: "The same answer from any cloud", input: 101, output: 11 }, aws: { text: "The same answer from any cloud", input: 202, output: 22 }, gcp: { text: "The same answer from any cloud", input: 303, output: 33 } };

const headers = (key: string, extra: Record<string, string> = {}) => ({ "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json", ...extra });
const body = (o: Record<string, unknown> = {}) => JSON.stringify({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hello" }], ...o });
const post = (key: string, o: { body?: Record<string, unknown>; headers?: Record<string, string> } = {}) =>
  callWith("/anthropic/v1/messages", { method: "POST", headers: headers(key, o.headers), body: body(o.body) }, vars);

/** The official SDK, its requests handed to the Worker with the test's vars. */
const sdk = (key: string) =>
  new Anthropic({
    apiKey: key, baseURL: "http://gateway/anthropic", maxRetries: 0,
    fetch: (input: string | URL | Request, init?: RequestInit) => {
      const u = new URL(input instanceof Request ? input.url : String(input));
      return callWith(u.pathname + u.search, init ?? {}, vars);
    },
  });

const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

describe("each member's request as its provider documents it", () => {
  it("Bedrock: InvokeModel for the member's model id, anthropic_version bedrock-2023-05-31, no model or stream in the body, betas in anthropic_beta, signed for its region", async () => {
    const vk = await mintIn(vars, "aws");
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    for (const stream of [false, true]) {
      const res = await post(vk.key, { body: { stream, temperature: 0.5 }, headers: { "anthropic-beta": "context-1m-2025-08-07, interleaved-thinking-2025-05-14" } });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    expect(calls.map((c) => c.url)).toEqual([
      `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(BEDROCK_ID)}/invoke`,
      `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(BEDROCK_ID)}/invoke-with-response-stream`,
    ]);
    for (const c of calls) {
      // docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html
      expect(json(c.body)).toEqual({ anthropic_version: "bedrock-2023-05-31", anthropic_beta: ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"], max_tokens: 64, temperature: 0.5, messages: [{ role: "user", content: "hello" }] });
      expect(c.headers.get("anthropic-beta")).toBeNull();
      expect(c.headers.get("authorization")).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$`));
      expect(c.headers.get("x-api-key")).toBeNull();
      expect(JSON.stringify([...c.headers])).not.toContain("sgk-");
    }
  });

  it("Vertex: rawPredict or streamRawPredict for the member's project, location and model id, anthropic_version vertex-2023-10-16, no model in the body, a minted token", async () => {
    const vk = await mintIn(vars, "gcp");
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    for (const stream of [false, true]) {
      const res = await post(vk.key, { body: { stream }, headers: { "anthropic-beta": "context-1m-2025-08-07" } });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    const sent = calls.filter((c) => cloudOf(c.url) === "gcp");
    const base = `https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj-1/locations/us-east5/publishers/anthropic/models/${encodeURIComponent(VERTEX_ID)}`;
    expect(sent.map((c) => c.url)).toEqual([`${base}:rawPredict`, `${base}:streamRawPredict`]);
    // cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude: the model in the URL, the
    // version in the body; a stream still says `stream: true` in the body, as Anthropic's does.
    expect(sent.map((c) => json(c.body))).toEqual([false, true].map((stream) => ({ anthropic_version: "vertex-2023-10-16", max_tokens: 64, stream, messages: [{ role: "user", content: "hello" }] })));
    for (const c of sent) {
      expect(c.headers.get("authorization")).toBe(`Bearer ${ACCESS_TOKEN}`);
      expect(c.headers.get("anthropic-beta")).toBe("context-1m-2025-08-07");
      expect(c.headers.get("x-api-key")).toBeNull();
    }
  });

  it("in the mixed pool every member serves the model, each in its own shape; the Anthropic member gets the caller's body as it came", async () => {
    const vk = await mintIn(vars, "clouds");
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    const seen = new Set<string>();
    for (let i = 0; i < 60 && seen.size < 3; i++) {
      expect((await post(vk.key)).status).toBe(200);
      seen.add(cloudOf(calls.at(-1)!.url)!);
    }
    expect([...seen].sort()).toEqual(["ant", "aws", "gcp"]);
    const ant = calls.find((c) => cloudOf(c.url) === "ant")!;
    expect(ant.url).toBe("https://api.anthropic.com/v1/messages");
    expect(json(ant.body)).toEqual(json(body()));
    expect(ant.headers.get("x-api-key")).toBe(ANTHROPIC_KEY);
    expect(calls.filter((c) => cloudOf(c.url) === "aws").every((c) => json(c.body).anthropic_version === "bedrock-2023-05-31")).toBe(true);
    expect(calls.filter((c) => cloudOf(c.url) === "gcp").every((c) => json(c.body).anthropic_version === "vertex-2023-10-16")).toBe(true);
  });

  it("a member with no name for the model is never chosen; a pool where none has one is a 400 and nothing is sent", async () => {
    const mixed = await mintIn(vars, "clouds");
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    for (let i = 0; i < 12; i++) expect((await post(mixed.key, { body: { model: "claude-opus-4-1" } })).status).toBe(200);
    expect(calls.map((c) => cloudOf(c.url))).toEqual(Array(12).fill("ant"));
    const only = await mintIn(vars, "aws");
    const none = await post(only.key, { body: { model: "claude-opus-4-1" } });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: "invalid_request", message: expect.stringMatching(/no member of pool aws serves this request/) });
    expect(calls).toHaveLength(12);
  });
});

describe("what the Anthropic SDK reads", () => {
  it("the same text and usage whichever member served, whole and streamed: Bedrock's event stream comes back as server-sent events", async () => {
    mockUpstream(cloudsUpstream((c) => SAID[c]));
    for (const pool of ["clouds", "aws", "gcp"]) {
      const client = sdk((await mintIn(vars, pool)).key);
      const whole = await client.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hello" }] });
      const streamed = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hello" }] }).finalMessage();
      for (const m of [whole, streamed]) {
        expect(m.content).toEqual([{ type: "text", text: SAID.aws.text }]);
        expect(m.stop_reason).toBe("end_turn");
        expect(Object.keys(m.usage).sort()).toEqual(expect.arrayContaining(["input_tokens", "output_tokens"]));
      }
      if (pool !== "clouds") {
        const said = SAID[pool as Cloud];
        for (const m of [whole, streamed]) expect(m.usage).toMatchObject({ input_tokens: said.input, output_tokens: said.output });
      }
    }
  });

  it("a Bedrock stream's events as Anthropic's: one per chunk, the raw event types in order, content-type text/event-stream", async () => {
    mockUpstream(cloudsUpstream((c) => SAID[c]));
    const vk = await mintIn(vars, "aws");
    const res = await post(vk.key, { body: { stream: true } });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\S+)\ndata: (.+)\n\n/gm)];
    expect(events.map((m) => m[1])).toEqual(claudeEvents(SAID.aws).map((e) => e.type));
    for (const m of events) expect(json(m[2]!).type).toBe(m[1]);
  });

  it("a Bedrock stream cut by an exception ends in Anthropic's error event, which the SDK throws as the matching error", async () => {
    const cases: [string, string][] = [["throttlingException", "rate_limit_error"], ["serviceUnavailableException", "overloaded_error"], ["modelStreamErrorException", "api_error"]];
    for (const [exception, type] of cases) {
      mockUpstream(async (req) =>
        cloudOf(req.url) === "aws"
          ? new Response(eventStreamOf(claudeEvents(SAID.aws), { cutAfter: 3, exception, message: "Too many tokens, please wait before trying again." }), { headers: { "content-type": "application/vnd.amazon.eventstream" } })
          : cloudsUpstream((c) => SAID[c])(req),
      );
      const client = sdk((await mintIn(vars, "aws")).key);
      const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hello" }] });
      const texts: string[] = [];
      stream.on("text", (t) => texts.push(t));
      const err = await stream.finalMessage().then(() => null, (e: unknown) => e);
      expect(err, exception).toBeInstanceOf(Anthropic.APIError);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: "error", error: { type, message: "Too many tokens, please wait before trying again." } });
      // What came before the exception reached the caller.
      expect(texts.join("")).toBe("The ");
      vi.restoreAllMocks();
    }
  });
});

/** Waits until the member key's limiter holds `n` answers' usage, then writes them to the ledger now. */
async function flushed(key: string, n: number): Promise<void> {
  const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
  await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(n)));
  await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
}

/** Each member's limiter key for the model, as GET /admin/pools lists them. */
async function memberKeys(pool: string): Promise<Record<Cloud, string>> {
  let keys: Partial<Record<Cloud, string>> = {};
  await vi.waitFor(async () => {
    const view = (await (await adminGet(vars, "/admin/pools")).json()) as { pools: { name: string; members: { name: Cloud; keys: string[] }[] }[] };
    const members = view.pools.find((p) => p.name === pool)!.members;
    keys = Object.fromEntries(members.map((m) => [m.name, m.keys.find((k) => k.includes(MODEL))]));
    expect(Object.values(keys).filter(Boolean)).toHaveLength(3);
  });
  return keys as Record<Cloud, string>;
}

describe("each answer priced at its member's price", () => {
  it("the ledger's rows per member key: its tokens, and its cost at its own provider's price for its own model id", async () => {
    const since = Date.now() - 60_000;
    const vk = await mintIn(vars, "ledger");
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    const served: Record<Cloud, number> = { ant: 0, aws: 0, gcp: 0 };
    for (let i = 0; i < 45 && Object.values(served).some((n) => n < 2); i++) {
      const res = await post(vk.key, { body: { stream: i % 2 === 1 } });
      expect(res.status).toBe(200);
      await res.text();
      served[cloudOf(calls.at(-1)!.url) as Cloud]++;
    }
    const keys = await memberKeys("ledger");
    expect(keys.aws).toMatch(new RegExp(`^bedrock:us-east-1/${BEDROCK_ID.replaceAll(".", "\\.")}:[0-9a-f]{16}$`));
    for (const c of ["ant", "aws", "gcp"] as const) await flushed(keys[c], served[c]);
    const res = await adminGet(vars, `/admin/usage?since=${since}&by=key`);
    const rows = ((await res.json()) as { rows: { key: string; requests: number; inputTokens: number; outputTokens: number; costUsd: number }[] }).rows;
    for (const c of ["ant", "aws", "gcp"] as const) {
      const mine = rows.filter((r) => r.key === keys[c]);
      const sum = (f: "requests" | "inputTokens" | "outputTokens" | "costUsd") => mine.reduce((a, r) => a + r[f], 0);
      expect({ member: c, requests: sum("requests"), input: sum("inputTokens"), output: sum("outputTokens") }).toEqual({ member: c, requests: served[c], input: served[c] * SAID[c].input, output: served[c] * SAID[c].output });
      expect(sum("costUsd"), c).toBeCloseTo((served[c] * (SAID[c].input * RATES[c].input + SAID[c].output * RATES[c].output)) / 1e6, 12);
    }
  });
});

describe("the pool chooses by learned headroom", () => {
  it("a member refusing with Bedrock's headerless throttling is left for the others while its key cools: every caller answered", { timeout: 60_000 }, async () => {
    const vk = await mintIn(vars, "clouds");
    let refusing = true;
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c], (c) => (c === "aws" && refusing ? throttled() : null)));
    // Until Bedrock has refused once.
    for (let i = 0; i < 60 && !calls.some((c) => cloudOf(c.url) === "aws"); i++) expect((await post(vk.key)).status).toBe(200);
    const refusedAt = calls.length;
    for (let i = 0; i < 20; i++) expect((await post(vk.key)).status).toBe(200);
    const after = calls.slice(refusedAt).map((c) => cloudOf(c.url));
    // Its key holds every caller for its cooldown: the others serve meanwhile.
    expect(after.filter((c) => c === "aws").length).toBeLessThanOrEqual(1);
    expect(after.filter((c) => c === "ant" || c === "gcp").length).toBeGreaterThanOrEqual(20);
    refusing = false;
  });
});

// A loaded machine may take past the default 5 s here: the pool's members' keys are still cooling
// from the test above (its shared state: isolate: false), and the roomy request waits its turn.
describe("a budgeted virtual key over the pool", { timeout: 30_000 }, () => {
  it("reserves at the dearest member's price for the model: Bedrock's regional premium is never under-reserved", async () => {
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    // A body of B bytes asking up to 1,000 output tokens: at Anthropic's price ($1 and $5 per
    // million) it would fit the budget; at Bedrock's regional price ($1.10 and $5.50) it does not.
    const bytes = new TextEncoder().encode(body({ max_tokens: 1_000 })).byteLength;
    const atAnthropic = (bytes * 1 + 1_000 * 5) / 1e6;
    const atBedrock = (bytes * 1.1 + 1_000 * 5.5) / 1e6;
    const vk = await mintIn(vars, "clouds", { budget: Number(((atAnthropic + atBedrock) / 2).toFixed(6)) });
    const res = await post(vk.key, { body: { max_tokens: 1_000 } });
    expect(res.status).toBe(402);
    const err = ((await res.json()) as { error: { type: string; message: string } }).error;
    expect(err.type).toBe("budget_exceeded");
    expect(err.message).toContain(`may cost up to $${atBedrock.toFixed(4)}`);
    expect(calls).toHaveLength(0);
    // With room for the dearest, it goes.
    const roomy = await mintIn(vars, "clouds", { budget: atBedrock * 1.01 });
    expect((await post(roomy.key, { body: { max_tokens: 1_000 } })).status).toBe(200);
  });

  it("is refused (403) where a member's id for the model has no price, naming it, and nothing is sent", async () => {
    const { calls } = mockUpstream(cloudsUpstream((c) => SAID[c]));
    const vk = await mintIn(vars, "unpriced", { budget: 5 });
    const res = await post(vk.key);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/model "bedrock:us\.anthropic\.claude-haiku-9-v1:0" has no price: add it to PRICES/);
    expect(calls).toHaveLength(0);
    // Without a budget nothing is priced first: it goes.
    const free = await mintIn(vars, "unpriced");
    expect((await post(free.key)).status).toBe(200);
  });
});
