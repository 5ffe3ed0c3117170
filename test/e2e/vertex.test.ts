// Google Vertex AI end to end (issue 41): `wrangler dev` with `vertex` pointed at the stand-in
// (its host per location as a path prefix the stand-in checks), a pool member holding a service
// account key whose tokens the gateway mints at the stand-in's token endpoint, and the official
// clients changed only in their base URL: @anthropic-ai/vertex-sdk (messages.create, whole and
// streamed) and @google/genai with `vertexai: true` (generateContent, generateContentStream), each
// through a virtual key and with the caller's own access token; express mode and @ai-sdk/google-vertex
// through a virtual key. Then a caller's token proving its
// project as an attacker would try to skip that, a member's token expiring mid-run, several callers
// at a quota the stand-in enforces with no headers, the ledger against the stand-in's counts, and a
// scan of every output for the key, its tokens and its signatures.
import { createVertex } from "@ai-sdk/google-vertex";
import { createVertexAnthropic } from "@ai-sdk/google-vertex/anthropic";
import AnthropicVertex from "@anthropic-ai/vertex-sdk";
import { GoogleGenAI } from "@google/genai";
import { generateText, streamText } from "ai";
import { OAuth2Client } from "google-auth-library";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Gateway, startGateway } from "../support/gateway.ts";
import { Admin, filesContaining, type MintedKey } from "../support/pools.ts";
import { type ServiceAccountFile, type Standin, startStandin } from "../support/standin/index.ts";
import { googleCredentials, tokenFor } from "../node/vertex-helpers.ts";
import { ADMIN_TOKEN } from "./setup.ts";

const CLAUDE = "claude-sonnet-4-5@20250929";
const GEMINI = "gemini-2.5-flash";
const HELLO = [{ role: "user" as const, content: "Say hello through the gateway" }];
/** The quota of the project the several callers share: 60 requests a minute (Vertex's quotas are per minute), no headers. */
const QUOTA_RPM = 120;
/**
 * A third project's input tokens a minute, per base model, which the operator states: Vertex counts a
 * Gemini's and a Claude's input alone against it (Claude's output has a quota of its own, large here).
 */
const TOKENS_TPM = 30_000;
const TOKENS_GEMINI = "gemini-2.5-pro";
const TOKENS_CLAUDE = "claude-opus-4-1";
/**
 * Claude's output tokens a minute, a quota of its own on Vertex (partner-models/claude/quotas:
 * `online_prediction_output_tokens_per_minute_per_base_model`), in two more projects: stated for one
 * model, learned from the refusals of another, whose message alone names the quota.
 */
const OUTPUT_TPM = 60_000;
const OUTPUT_STATED = "claude-haiku-4-5";
const OUTPUT_LEARNED = "claude-sonnet-4";

let standin: Standin;
let gateway: Gateway;
let member: ServiceAccountFile;
let vk: MintedKey;
let otlp: Server;
/** Every span payload the gateway exported, as sent, and every error body a caller saw: the scan reads them. */
const spans: string[] = [];
const errorsSeen: string[] = [];
/** The owner's token an attacker put in a URL's query (below): what wrangler's own trace store keeps of a URL. */
let attackerUrlToken = "";

beforeAll(async () => {
  const otlpPort = await freePort();
  otlp = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      spans.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((ok) => otlp.listen(otlpPort, "127.0.0.1", ok));
  standin = await startStandin({
    latencyMs: 20, outputTokens: 7, streamChunks: 3,
    keyLimits: {
      "quota-proj": { rpm: QUOTA_RPM }, "tokens-proj": { rpm: 6_000, tpm: 0, itpm: TOKENS_TPM, otpm: 10_000_000 },
      "output-proj": { rpm: 6_000, tpm: 0, itpm: 10_000_000, otpm: OUTPUT_TPM },
    },
  });
  // One service account with a role in every project the pools use: what a team's key file is.
  member = standin.serviceAccount({ project: "member-proj", name: "slotgate-pool", projects: ["member-proj", "quota-proj", "tokens-proj", "output-proj"] });
  const pools = {
    gcp: { provider: "vertex", members: [{ name: "gcp-a", provider: "vertex", project: "member-proj", location: "us-east5", secret: "VERTEX_SA_KEY" }] },
    quota: { provider: "vertex", members: [{ name: "gcp-q", provider: "vertex", project: "quota-proj", location: "us-east5", secret: "VERTEX_SA_KEY" }] },
    tokens: { provider: "vertex", members: [{ name: "gcp-t", provider: "vertex", project: "tokens-proj", location: "us-east5", secret: "VERTEX_SA_KEY" }] },
    output: { provider: "vertex", members: [{ name: "gcp-o", provider: "vertex", project: "output-proj", location: "us-east5", secret: "VERTEX_SA_KEY" }] },
  };
  gateway = await startGateway({
    providers: {
      vertex: {
        baseUrl: `${standin.url}/{resource}-aiplatform.googleapis.com`,
        quota: {
          models: {
            [`us-east5/${TOKENS_GEMINI}`]: { tokensPerMinute: TOKENS_TPM }, [`us-east5/${TOKENS_CLAUDE}`]: { tokensPerMinute: TOKENS_TPM },
            [`us-east5/${OUTPUT_STATED}`]: { outputTokensPerMinute: OUTPUT_TPM },
          },
        },
      },
    },
    vars: {
      ADMIN_TOKEN, USAGE_FLUSH_MS: "200", POOLS: JSON.stringify(pools), VERTEX_SA_KEY: JSON.stringify(member),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`, OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    logLevel: "log", // the Worker's event lines too, for the scan
    verbose: !!process.env.E2E_VERBOSE,
  });
  vk = await new Admin(gateway.url, ADMIN_TOKEN).mint("vertex-evals", "gcp");
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([gateway?.close(), standin?.close(), new Promise<void>((ok) => (otlp ? otlp.close(() => ok()) : ok()))]);
});

/** A Google auth client that only ever says `Authorization: Bearer <key>`: how a virtual key rides the clients' Google auth. */
const bearer = (key: string) => new OAuth2Client({ credentials: { access_token: key } });
const counted = (project: string, model: string) => standin.stats().usageBy[project]?.[model];
/** The stand-in's log for one project, as `<host>/<verb> <status>`. */
const upstreamOf = (project: string) =>
  standin.stats().log.filter((a) => a.path.includes(`/projects/${project}/`)).map((a) => `${a.path.split("/")[1]} ${a.path.split(":").at(-1)} ${a.status}`);

/** Claude through the gateway with a virtual key: only baseURL and the auth client changed (docs/providers.md). */
const claudeVk = (key = vk.key, maxRetries = 0) =>
  new AnthropicVertex({ baseURL: `${gateway.url}/vertex/v1`, region: "us-east5", projectId: "any-project", authClient: bearer(key), maxRetries });
/** Gemini through the gateway with a virtual key (docs/providers.md). */
const geminiVk = (key = vk.key) =>
  new GoogleGenAI({ vertexai: true, project: "any-project", location: "us-central1", httpOptions: { baseUrl: `${gateway.url}/vertex` }, googleAuthOptions: { authClient: bearer(key) } });

/** A raw POST to the gateway's Vertex route, as an attacker sends it. */
async function raw(path: string, token: string, body: unknown = { anthropic_version: "vertex-2023-10-16", max_tokens: 16, messages: HELLO }, query = "") {
  const res = await fetch(`${gateway.url}/vertex${path}${query}`, {
    method: "POST", headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) errorsSeen.push(`${res.status} ${[...res.headers].flat().join(" ")} ${text}`);
  return { status: res.status, key: res.headers.get("x-slotgate-key"), text };
}
const claudePath = (project: string, location = "us-east5") => `/v1/projects/${project}/locations/${location}/publishers/anthropic/models/${CLAUDE}:rawPredict`;

describe("the clients with only their base URL changed", () => {
  it("(a) a pool member's service account: @anthropic-ai/vertex-sdk whole and streamed, @google/genai generateContent and its stream, at the member's project and location", async () => {
    const claude = claudeVk();
    const { data: whole, response } = await claude.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO }).withResponse();
    const stream = claude.messages.stream({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    const events: string[] = [];
    for await (const e of stream) events.push(e.type);
    const streamed = await stream.finalMessage();
    expect(whole.content[0]).toMatchObject({ type: "text" });
    expect([events[0], events.at(-1)]).toEqual(["message_start", "message_stop"]);
    expect([whole.usage.output_tokens, streamed.usage.output_tokens]).toEqual([7, 7]);
    // The member's key: its location and base model (no version), its project's hash, whatever token was minted.
    expect(response.headers.get("x-slotgate-key")).toMatch(/^vertex:us-east5\/claude-sonnet-4-5:[0-9a-f]{16}$/);

    const ai = geminiVk();
    const answer = await ai.models.generateContent({ model: GEMINI, contents: "hello" });
    let last;
    let chunks = 0;
    for await (const c of await ai.models.generateContentStream({ model: GEMINI, contents: "hello" })) {
      chunks++;
      last = c.usageMetadata;
    }
    expect(answer.text).toBeTruthy();
    expect(chunks).toBeGreaterThan(1);
    // The caller's project and location were replaced by the member's; the host is the location's.
    expect(upstreamOf("member-proj")).toEqual([
      "us-east5-aiplatform.googleapis.com rawPredict 200", "us-east5-aiplatform.googleapis.com streamRawPredict 200",
      "us-east5-aiplatform.googleapis.com generateContent 200", "us-east5-aiplatform.googleapis.com streamGenerateContent 200",
    ]);
    expect(counted("member-proj", CLAUDE)).toEqual({ answers: 2, input: whole.usage.input_tokens + streamed.usage.input_tokens, output: 14 });
    expect(counted("member-proj", GEMINI)).toEqual({ answers: 2, input: answer.usageMetadata!.promptTokenCount! + last!.promptTokenCount!, output: answer.usageMetadata!.candidatesTokenCount! + last!.candidatesTokenCount! });
    expect(standin.stats().oauth.issued, "one token minted by the gateway, kept for the next requests").toBe(1);
  });

  it("(b) the caller's own access token, passed through to its own project: both clients, whole and streamed", async () => {
    const { auth, client } = await googleCredentials(standin.serviceAccount({ project: "caller-proj" }));
    const claude = new AnthropicVertex({ baseURL: `${gateway.url}/vertex/v1`, region: "global", projectId: "caller-proj", googleAuth: auth, maxRetries: 0 });
    const whole = await claude.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    const streamed = await claude.messages.stream({ model: CLAUDE, max_tokens: 32, messages: HELLO }).finalMessage();
    const ai = new GoogleGenAI({ vertexai: true, project: "caller-proj", location: "europe-west4", httpOptions: { baseUrl: `${gateway.url}/vertex` }, googleAuthOptions: { authClient: client } });
    const answer = await ai.models.generateContent({ model: GEMINI, contents: "hello" });
    let chunks = 0;
    for await (const _ of await ai.models.generateContentStream({ model: GEMINI, contents: "hello" })) chunks++;
    expect([whole.usage.output_tokens, streamed.usage.output_tokens, answer.usageMetadata?.candidatesTokenCount]).toEqual([7, 7, 7]);
    expect(chunks).toBeGreaterThan(1);
    expect(upstreamOf("caller-proj")).toEqual([
      "aiplatform.googleapis.com rawPredict 200", "aiplatform.googleapis.com streamRawPredict 200",
      "europe-west4-aiplatform.googleapis.com generateContent 200", "europe-west4-aiplatform.googleapis.com streamGenerateContent 200",
    ]);
  });
});

describe("more ways in through a virtual key", () => {
  it("@google/genai in express mode: the virtual key as its API key, no project or location in the path; the member's put in", async () => {
    const before = upstreamOf("member-proj").length;
    const ai = new GoogleGenAI({ vertexai: true, apiKey: vk.key, httpOptions: { baseUrl: `${gateway.url}/vertex` } });
    const answer = await ai.models.generateContent({ model: GEMINI, contents: "hello" });
    expect(answer.usageMetadata?.candidatesTokenCount).toBe(7);
    expect(upstreamOf("member-proj").slice(before)).toEqual(["us-east5-aiplatform.googleapis.com generateContent 200"]);
  });

  it("@ai-sdk/google-vertex: Gemini with baseURL down to /publishers/google, Claude down to /publishers/anthropic/models, whole and streamed", async () => {
    const before = upstreamOf("member-proj").length;
    const vertex = createVertex({ baseURL: `${gateway.url}/vertex/v1beta1/projects/any-project/locations/us-central1/publishers/google`, googleAuthOptions: { authClient: bearer(vk.key) as never } });
    const gemini = await generateText({ model: vertex(GEMINI), prompt: "hello", maxRetries: 0 });
    const geminiStream = streamText({ model: vertex(GEMINI), prompt: "hello", maxRetries: 0 });
    await geminiStream.consumeStream();
    const anthropic = createVertexAnthropic({ baseURL: `${gateway.url}/vertex/v1/projects/any-project/locations/us-east5/publishers/anthropic/models`, generateAuthToken: async () => vk.key });
    const claude = await generateText({ model: anthropic(CLAUDE), prompt: "hello", maxRetries: 0 });
    const claudeStream = streamText({ model: anthropic(CLAUDE), prompt: "hello", maxRetries: 0 });
    await claudeStream.consumeStream();
    expect([gemini.usage.outputTokens, (await geminiStream.usage).outputTokens, claude.usage.outputTokens, (await claudeStream.usage).outputTokens]).toEqual([7, 7, 7, 7]);
    expect(upstreamOf("member-proj").slice(before)).toEqual([
      "us-east5-aiplatform.googleapis.com generateContent 200", "us-east5-aiplatform.googleapis.com streamGenerateContent 200",
      "us-east5-aiplatform.googleapis.com rawPredict 200", "us-east5-aiplatform.googleapis.com streamRawPredict 200",
    ]);
  });
});

describe("a caller's own token is keyed by its project only once Vertex has answered it there", () => {
  it("unproven: its own key; proven: the project's, which a rotated token joins once answered and a stranger never reaches", async () => {
    const owner = standin.serviceAccount({ project: "team-a" });
    const first = await tokenFor(owner);
    const a1 = await raw(claudePath("team-a"), first);
    const a2 = await raw(claudePath("team-a"), first);
    expect([a1.status, a2.status]).toEqual([200, 200]);
    const projectKey = a2.key!;
    expect(projectKey).toMatch(/^vertex:us-east5\/claude-sonnet-4-5:[0-9a-f]{16}$/);
    expect(a1.key, "before its first answer the token is keyed by its own hash").not.toBe(projectKey);
    // A rotated token (an hour later, a new one): on its own key until answered, then the project's.
    const rotated = await tokenFor(owner);
    expect(rotated).not.toBe(first);
    const r1 = await raw(claudePath("team-a"), rotated);
    const r2 = await raw(claudePath("team-a"), rotated);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect([r1.key === projectKey, r2.key]).toEqual([false, projectKey]);

    // Strangers naming team-a: a token of another project (even one proven there), a made-up one,
    // none at all, the owner's token hidden in a query parameter beside a made-up header. Each gets
    // Vertex's own refusal and a key of its own, however often it tries.
    const stranger = await tokenFor(standin.serviceAccount({ project: "team-b" }));
    expect((await raw(claudePath("team-b"), stranger)).status).toBe(200);
    expect((await raw(claudePath("team-b"), stranger)).status).toBe(200);
    const tries = [
      ...(await Promise.all([1, 2, 3].map(() => raw(claudePath("team-a"), stranger)))),
      await raw(claudePath("team-a"), "ya29.c.made-up-token"),
      await raw(claudePath("team-a"), ""),
      await raw(claudePath("team-a"), "ya29.c.made-up-token", undefined, `?access_token=${(attackerUrlToken = first)}`),
      // Another location of team-a: its key is another limiter anyway, never the proven one's.
      await raw(claudePath("team-a", "europe-west1"), stranger),
    ];
    expect(tries.map((t) => t.status)).toEqual([403, 403, 403, 401, 401, 401, 403]);
    for (const t of tries) expect(t.key === projectKey, `${t.status} ${t.key}`).toBe(false);
    // The limiter it never reached knows nothing of the strangers: still only the owner's four answers.
    const state = await fetch(`${gateway.url}/admin/keys/${encodeURIComponent(projectKey)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(state.status).toBe(200);
    expect(JSON.stringify(await state.json())).not.toMatch(/401|403|bad_key|denied/);
    // And the owner keeps its key.
    expect((await raw(claudePath("team-a"), first)).key).toBe(projectKey);
  });
});

describe("a member's token that expires mid-run", () => {
  it("is minted again under the callers: no request fails, every answer on one limiter key", async () => {
    const claude = claudeVk();
    const before = standin.stats();
    const keys = new Set<string>();
    let expired = false;
    let done = 0;
    const statuses: number[] = [];
    const one = async () => {
      const { response } = await claude.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO }).withResponse();
      statuses.push(response.status);
      keys.add(response.headers.get("x-slotgate-key") ?? "");
      if (++done === 8 && !expired) {
        expired = true;
        standin.expireTokens();
      }
    };
    const worker = async () => {
      for (let i = 0; i < 6; i++) await one();
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(statuses).toEqual(Array(24).fill(200));
    expect(keys.size).toBe(1);
    const after = standin.stats();
    expect(after.oauth.issued - before.oauth.issued, "a new token minted").toBeGreaterThanOrEqual(1);
    expect(after.oauth.expired - before.oauth.expired, "the old one refused upstream at least once").toBeGreaterThanOrEqual(1);
  });
});

describe("several callers at once at a quota the stand-in enforces with no headers", () => {
  it("every request answered, no refusal seen by a caller, at most 5% of attempts refused upstream", { timeout: 180_000 }, async () => {
    const quotaVk = await new Admin(gateway.url, ADMIN_TOKEN).mint("vertex-quota", "quota");
    const before = standin.stats().log.length;
    const callers = [claudeVk(quotaVk.key), claudeVk(quotaVk.key)];
    const statuses: number[] = [];
    await Promise.all(
      callers.flatMap((c) => Array.from({ length: 2 }, async () => {
        for (let i = 0; i < 40; i++) statuses.push(await c.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO }).then(() => 200, (e: { status?: number }) => e.status ?? 0));
      })),
    );
    expect(statuses).toEqual(Array(160).fill(200));
    const attempts = standin.stats().log.slice(before).filter((a) => a.path.includes("/projects/quota-proj/"));
    const refused = attempts.filter((a) => a.status === 429).length;
    expect(attempts.length - refused).toBe(160);
    expect(refused / attempts.length, `${refused} of ${attempts.length} refused`).toBeLessThanOrEqual(0.05);
  });
});

describe("a tokens quota the operator states, which Vertex counts in input tokens", () => {
  it("prompts of 500 tokens asking 4,000 out, @google/genai and @anthropic-ai/vertex-sdk: each charged its prompt alone, none refused upstream", async () => {
    const key = (await new Admin(gateway.url, ADMIN_TOKEN).mint("vertex-tokens", "tokens")).key;
    const prompt = "count the words of this sentence ".repeat(60);
    const before = standin.stats().log.length;
    // 40 of each draw about 20,000 of the minute's 30,000 input tokens. Charged their output limits
    // too (before), 4,500 a request: the bucket held 6 and the rest went one every 9 s.
    const n = 40;
    const ai = geminiVk(key);
    const claude = claudeVk(key);
    const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => {
      const ok = i % 2 === 0
        ? ai.models.generateContent({ model: TOKENS_GEMINI, contents: prompt, config: { maxOutputTokens: 4_000 } })
        : claude.messages.create({ model: TOKENS_CLAUDE, max_tokens: 4_000, messages: [{ role: "user", content: prompt }] });
      return ok.then(() => 200, (e: { status?: number; code?: number }) => e.status ?? e.code ?? 0);
    }));
    expect(statuses).toEqual(Array(n).fill(200));
    const attempts = standin.stats().log.slice(before).filter((a) => a.path.includes("/projects/tokens-proj/"));
    expect(attempts.filter((a) => a.status === 429), "attempts refused upstream").toHaveLength(0);
    expect(attempts).toHaveLength(n);
    // Each key's window holds what its prompts did not draw (the level only rises with time); charged 4,500 a request it would be empty.
    const keys = (await new Admin(gateway.url, ADMIN_TOKEN).member("tokens", "gcp-t")).keys;
    for (const model of [TOKENS_GEMINI, TOKENS_CLAUDE]) {
      const k = keys.find((x) => x.includes(`/${model}:`))!;
      const state = (await (await new Admin(gateway.url, ADMIN_TOKEN).fetch("GET", `/admin/keys/${encodeURIComponent(k)}`)).json()) as { quotas: { tokens: { remaining: number; stated: number } } };
      expect(state.quotas.tokens.stated, model).toBe(TOKENS_TPM);
      expect(state.quotas.tokens.remaining, model).toBeGreaterThan(TOKENS_TPM - (n / 2) * 700);
    }
  });
});

describe("Claude's output tokens quota, which Vertex counts apart", () => {
  /** `n` Claude requests at once through pool `output` asking `maxTokens` each: their statuses, the project's attempts, and the key's quotas. */
  async function burst(model: string, n: number, maxTokens: number) {
    const admin = new Admin(gateway.url, ADMIN_TOKEN);
    const claude = claudeVk((await admin.mint(`vertex-output-${model}`, "output")).key);
    const before = standin.stats().log.length;
    const statuses = await Promise.all(Array.from({ length: n }, () =>
      claude.messages.create({ model, max_tokens: maxTokens, messages: HELLO }).then(() => 200, (e: { status?: number }) => e.status ?? 0)));
    const attempts = standin.stats().log.slice(before).filter((a) => a.path.includes("/projects/output-proj/"));
    const k = (await admin.member("output", "gcp-o")).keys.find((x) => x.includes(`/${model}:`))!;
    const { quotas } = (await (await admin.fetch("GET", `/admin/keys/${encodeURIComponent(k)}`)).json()) as { quotas: Record<string, { limit: number | null; stated?: number } | null | undefined> };
    return { statuses, attempts, refused: attempts.filter((a) => a.status === 429).length, quotas };
  }

  it("stated (`outputTokensPerMinute`): 64 asking 1,000 out at once on 60,000 a minute, @anthropic-ai/vertex-sdk: paced from the first request, at most the burst's edge refused upstream", async () => {
    // The minute's bucket holds 60 of them; the other 4 wait a second each. Unstated, they all went and 4 were refused.
    const { statuses, attempts, refused, quotas } = await burst(OUTPUT_STATED, 64, 1_000);
    expect(statuses).toEqual(Array(64).fill(200));
    // The key's window refills from the burst's first grant, Vertex's bucket from its arrival: under
    // npm test's load that gap passed the 50 ms a grant waits beyond its need (limiter/timing.ts), and
    // the 61st found the bucket a few tokens short, once in 9 runs. Never more than that one.
    expect(refused, "attempts refused upstream").toBeLessThanOrEqual(1);
    expect(attempts).toHaveLength(64 + refused);
    expect(quotas.output).toMatchObject({ limit: OUTPUT_TPM, stated: OUTPUT_TPM });
    expect(quotas.tokens ?? null, "no input window stated or learned").toBeNull();
  });

  it("learned from its refusals: the window they name is the output's, at what was let through, not a count of requests", { timeout: 60_000 }, async () => {
    const { statuses, refused, quotas } = await burst(OUTPUT_LEARNED, 64, 1_000);
    expect(statuses).toEqual(Array(64).fill(200));
    expect(refused, "the burst's refusals teach it").toBeGreaterThanOrEqual(1);
    // 60 let through in the minute of the first refusal, each asking 1,000: 60,000 of output, counted
    // from the grants numbered before it (the burst's other refusals, its sends reordered, leave it:
    // learned.ts). A requests window would count 60.
    expect(quotas.output?.limit, "less only the grants whose sends overtook the first refused").toBeGreaterThanOrEqual(0.8 * OUTPUT_TPM);
    expect(quotas.output?.limit, "probes climb a little above it while its pace binds").toBeLessThanOrEqual(1.1 * OUTPUT_TPM);
    expect(quotas.requests ?? null).toBeNull();
  });
});

describe("what the gateway says of it", () => {
  it("the ledger's tokens equal the stand-in's counts, streams included", async () => {
    const want: Record<string, { input: number; output: number }> = {};
    for (const models of Object.values(standin.stats().usageBy))
      for (const [model, u] of Object.entries(models)) {
        const w = (want[model] ??= { input: 0, output: 0 });
        w.input += u.input;
        w.output += u.output;
      }
    expect(Object.keys(want).sort()).toEqual([CLAUDE, GEMINI, TOKENS_CLAUDE, TOKENS_GEMINI, OUTPUT_STATED, OUTPUT_LEARNED].sort());
    let got: Record<string, { input: number; output: number; unknown: number }> = {};
    for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 300))) {
      const res = await fetch(`${gateway.url}/admin/usage?since=0&by=model`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      got = {};
      for (const r of ((await res.json()) as { rows: { model: string; inputTokens: number; outputTokens: number; unknownUsage: number }[] }).rows) {
        const g = (got[r.model] ??= { input: 0, output: 0, unknown: 0 });
        g.input += r.inputTokens;
        g.output += r.outputTokens;
        g.unknown += r.unknownUsage;
      }
      if (Object.entries(want).every(([m, w]) => got[m]?.output === w.output)) break;
    }
    for (const [model, w] of Object.entries(want)) expect(got[model], model).toEqual({ ...w, unknown: 0 });
  });

  it("Claude Sonnet 4.5 priced by location: at list price through global, 10% more through us-east5 (platform.claude.com, \"Claude on Vertex AI\")", async () => {
    type Group = { key: string; inputTokens: number; outputTokens: number; cachedTokens: number; cacheWriteTokens: number; costUsd: number };
    const res = await fetch(`${gateway.url}/admin/usage?since=0&by=key`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const groups = ((await res.json()) as { groups: Group[] }).groups;
    const at = (loc: string) => groups.filter((g) => g.key.includes(`:${loc}/claude-sonnet-4-5:`));
    // (a)'s member at us-east5 and (b)'s caller at global, two answers each at least.
    for (const [loc, rate] of [["global", { input: 3, output: 15 }], ["us-east5", { input: 3.3, output: 16.5 }]] as const) {
      const gs = at(loc);
      expect(gs.length, loc).toBeGreaterThan(0);
      for (const g of gs) {
        expect(g.cachedTokens + g.cacheWriteTokens, `${loc}: the stand-in caches nothing`).toBe(0);
        expect(g.costUsd, loc).toBeCloseTo((g.inputTokens * rate.input + g.outputTokens * rate.output) / 1e6, 12);
      }
    }
  });

  it("no service account key, token or signature in logs, spans, metrics, admin answers, error bodies or storage", async () => {
    const admin = new Admin(gateway.url, ADMIN_TOKEN);
    const texts: string[] = [...errorsSeen];
    const get = async (path: string) => {
      const res = await admin.fetch("GET", path);
      const text = await res.text();
      texts.push(`${path} ${res.status}\n${[...res.headers].flat().join("\n")}\n${text}`);
      return text;
    };
    const keys = JSON.parse(await get("/admin/keys")) as { keys: { key: string }[] };
    expect(keys.keys.some((k) => k.key.startsWith("vertex:"))).toBe(true);
    for (const { key } of keys.keys) await get(`/admin/keys/${encodeURIComponent(key)}`);
    for (const path of ["/admin", "/admin/pools", "/admin/virtual-keys", "/admin/metrics", "/admin/upstream", "/admin/usage?since=0&by=model"]) await get(path);
    const metrics = await fetch(`${gateway.url}/metrics`);
    texts.push(await metrics.text());
    // A bad request's error bodies too: a path the row refuses, and a member whose answer is refused.
    await raw("/v1/projects/member-proj/locations/us-east5%2F..%2Fx/publishers/anthropic/models/x:rawPredict", vk.key);
    expect(errorsSeen.length).toBeGreaterThan(0);

    const { tokens, signatures } = standin.googleSecrets();
    expect(tokens.length).toBeGreaterThan(3);
    expect(signatures.length).toBe(tokens.length);
    // The private key's body, line by line (a PEM printed whole or in part), its id, and what it made.
    const pem = member.private_key.split("\n").filter((l) => l.length > 40);
    const secrets = [...pem, member.private_key_id, ...tokens, ...tokens.map((t) => t.slice(8, 40)), ...signatures.map((s) => s.slice(0, 40)), vk.key];
    expect(spans.length, "spans were exported to be scanned").toBeGreaterThan(0);
    const output = gateway.output();
    expect(output).toContain('{"event":');
    const where = { "admin answers, metrics and errors": texts.join("\n"), "spans": spans.join("\n"), "event lines": output };
    for (const [place, text] of Object.entries(where)) for (const s of secrets) expect(text.includes(s), `${s.slice(0, 12)}... in ${place}`).toBe(false);
    // Storage (every Durable Object's files, and wrangler's local trace store): the tokens the gateway
    // minted. Not the one an attacker above put in its own URL's query: wrangler dev's local trace
    // store records request URLs as sent even with invocation logs off (wrangler.toml), as Cloudflare
    // would a deployed Worker's URLs in the traces an operator turns on (docs/providers.md says so).
    const minted = tokens.filter((t) => t !== attackerUrlToken);
    for (const s of [...pem, member.private_key_id, ...minted]) expect(filesContaining(gateway.persistDir, s), `${s.slice(0, 12)}... stored`).toEqual([]);
  });
});
