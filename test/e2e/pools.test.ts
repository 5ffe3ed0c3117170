// Key pools and virtual keys end to end (issue 19): `wrangler dev` with POOLS and the members' keys
// as vars, the stand-in keeping a bucket per credential, and the official SDKs holding only a
// virtual key. Minting, listing without key material, the SDKs' own credential headers, revocation
// of a queued request, a wrong provider route, a member out of quota and back, an Azure member, and
// a scan of every admin answer, error, event line and stored byte for secrets (a missing secret:
// pools-config.test.ts).
import Anthropic from "@anthropic-ai/sdk";
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { Admin, filesContaining, type MintedKey, type Pools, poolVars } from "../support/pools.ts";
import type { Stats } from "../support/standin/index.ts";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, OPENAI_MODEL, anthropicVia, openaiVia, prompt, rejection, type Stack, useStack } from "./setup.ts";

const secret = (label: string) => `sk-pool-${label}-${randomBytes(8).toString("hex")}`;
const SECRETS = {
  OPENAI_KEY_A: secret("a"), OPENAI_KEY_B: secret("b"), OPENAI_KEY_BAD: secret("bad"), OPENAI_KEY_GOOD: secret("good"),
  OPENAI_KEY_SOLO: secret("solo"), AZURE_KEY: secret("azure"), ANTHROPIC_KEY_A: secret("claude"),
};
const API_VERSION = "2024-10-21";

const pools = (standinUrl: string): Pools => ({
  "openai-main": { provider: "openai", members: [{ name: "org-a", secret: "OPENAI_KEY_A" }, { name: "org-b", secret: "OPENAI_KEY_B" }] },
  // The bad member first, so that a router that breaks ties by order meets it at once.
  flaky: { provider: "openai", members: [{ name: "m-bad", secret: "OPENAI_KEY_BAD" }, { name: "m-good", secret: "OPENAI_KEY_GOOD" }] },
  solo: { provider: "openai", members: [{ name: "only", secret: "OPENAI_KEY_SOLO" }] },
  "azure-mix": {
    provider: "openai",
    members: [{ name: "az", provider: "azure", baseUrl: standinUrl, deployments: { [OPENAI_MODEL]: "mini-dep" }, apiVersion: API_VERSION, secret: "AZURE_KEY" }],
  },
  claude: { provider: "anthropic", members: [{ name: "c-a", secret: "ANTHROPIC_KEY_A" }] },
});

const LATENCY_MS = 50;
const stack = useStack({
  admin: true,
  logLevel: "log", // the info event lines too, for the secret scan
  standin: { latencyMs: LATENCY_MS, echo: true, quotaExhaustedKeys: [SECRETS.OPENAI_KEY_BAD] },
  vars: (url) => ({ ...poolVars(pools(url), SECRETS), POOL_OUT_MS: "500" }),
});

const admin = () => new Admin(stack.gateway.url, ADMIN_TOKEN);
/** Every key minted in this file, and every error answer seen: the secret scan reads them all. */
const minted: MintedKey[] = [];
const errorsSeen: string[] = [];

async function mint(name: string, pool: string, extra: { lane?: string; maxConcurrency?: number } = {}): Promise<MintedKey> {
  const vk = await admin().mint(name, pool, extra);
  minted.push(vk);
  return vk;
}

const chat = (text: string) => ({ model: OPENAI_MODEL, max_tokens: 16, messages: [{ role: "user" as const, content: prompt(text) }] });
const log = (s: Stack) => s.standin.stats().log;
const attemptsBy = (s: Stack, credential: string) => log(s).filter((a) => a.credential === credential);
const byCredential = (s: Stack, credential: string): Stats["byCredential"][string] =>
  s.standin.stats().byCredential[credential] ?? { attempts: 0, successes: 0, rateLimited: 0, quotaErrors: 0, other: 0 };

/** The error an SDK call threw, as an APIError, its body and headers kept for the secret scan. */
async function apiError(p: PromiseLike<unknown>): Promise<InstanceType<typeof OpenAI.APIError> | InstanceType<typeof Anthropic.APIError>> {
  const e = await rejection(p);
  if (!(e instanceof OpenAI.APIError) && !(e instanceof Anthropic.APIError)) throw e;
  errorsSeen.push(JSON.stringify(e.error), e.headers ? [...(e.headers as Headers)].flat().join("\n") : "");
  return e;
}

async function eventually(what: string, cond: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("virtual keys", () => {
  it("minting: 201 with an sgk- key shown once, 409 on a name already used, 401 without the admin token", async () => {
    const res = await admin().fetch("POST", "/admin/virtual-keys", { name: "ci-evals", pool: "openai-main" });
    expect(res.status).toBe(201);
    const vk = (await res.json()) as MintedKey;
    minted.push(vk);
    expect(vk).toMatchObject({ name: "ci-evals", pool: "openai-main", key: expect.stringMatching(/^sgk-[A-Za-z0-9_-]{16,}$/) });
    expect(Math.abs(Date.parse(vk.createdAt) - Date.now())).toBeLessThan(60_000);
    const again = await admin().fetch("POST", "/admin/virtual-keys", { name: "ci-evals", pool: "flaky" });
    expect(again.status).toBe(409);
    const body = await again.text();
    errorsSeen.push(body);
    expect(JSON.parse(body)).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } });
    expect(body).not.toContain(vk.key);
    const stranger = await fetch(`${stack.gateway.url}/admin/virtual-keys`, { method: "POST", body: JSON.stringify({ name: "x", pool: "openai-main" }) });
    expect(stranger.status).toBe(401);
    const other = await mint("ci-evals-2", "openai-main");
    expect(other.key).not.toBe(vk.key);
  });

  it("used where each SDK puts its key (Bearer, x-api-key): the provider sees a member's key, never the virtual key", async () => {
    const vk = await mint("sdk-openai", "openai-main");
    const client = openaiVia(stack, vk.key);
    const keys = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const { data, response } = await client.chat.completions.create(chat(`pooled ${i}`)).withResponse();
      expect(data.choices[0]!.message.content).toBe(prompt(`pooled ${i}`));
      keys.add(response.headers.get("x-slotgate-key") ?? "");
    }
    const members = (await admin().pools()).pools.find((p) => p.name === "openai-main")!.members;
    const memberKeys = members.flatMap((m) => m.keys);
    // Every answer names the virtual key's own key, whichever member served it: none of theirs.
    expect(keys.size).toBe(1);
    for (const k of keys) expect(memberKeys, "no answer names a member's limiter key").not.toContain(k);
    const sent = log(stack).filter((a) => a.credential === SECRETS.OPENAI_KEY_A || a.credential === SECRETS.OPENAI_KEY_B);
    expect(sent.length).toBeGreaterThanOrEqual(6);
    expect(sent.every((a) => a.credentialHeader === "authorization" && a.extraCredentials.length === 0 && a.path === "/v1/chat/completions")).toBe(true);

    const claude = await mint("sdk-claude", "claude");
    const message = await anthropicVia(stack, claude.key).messages.create({ model: ANTHROPIC_MODEL, max_tokens: 16, messages: [{ role: "user", content: prompt("claude") }] });
    expect(message.content[0]).toMatchObject({ type: "text", text: prompt("claude") });
    expect(attemptsBy(stack, SECRETS.ANTHROPIC_KEY_A).at(-1)).toMatchObject({ provider: "anthropic", credentialHeader: "x-api-key", extraCredentials: [], outcome: "success" });
    expect(log(stack).filter((a) => [a.credential, ...a.extraCredentials].some((c) => c?.startsWith("sgk-")))).toEqual([]);
  });

  it("listing: name, pool, lane, maxConcurrency, createdAt, lastUsed, and no key material", async () => {
    const vk = await mint("listed", "openai-main", { lane: "low", maxConcurrency: 4 });
    const unused = await mint("listed-unused", "solo");
    await openaiVia(stack, vk.key).chat.completions.create(chat("listed"));
    const { keys, text } = await admin().list();
    expect(keys.find((k) => k.name === "listed")).toMatchObject({ name: "listed", pool: "openai-main", lane: "low", maxConcurrency: 4, createdAt: vk.createdAt, lastUsed: expect.any(String) });
    expect(Date.parse(keys.find((k) => k.name === "listed")!.lastUsed!)).toBeGreaterThanOrEqual(Date.parse(vk.createdAt));
    expect(keys.find((k) => k.name === "listed-unused")).toMatchObject({ pool: "solo", lastUsed: null });
    expect(keys.every((k) => !("key" in k))).toBe(true);
    for (const m of minted) {
      expect(text).not.toContain(m.key);
      expect(text).not.toContain(m.key.slice(4)); // nor the key without its prefix
    }
    for (const value of Object.values(SECRETS)) expect(text).not.toContain(value);
    expect(unused.key).toMatch(/^sgk-/);
  });

  it("an unknown sgk- key gets 401 unauthorized; a key used on a provider its pool cannot serve gets 400 invalid_request; neither is forwarded", async () => {
    const before = stack.standin.stats().attempts;
    const unknown = await apiError(openaiVia(stack, `sgk-${randomBytes(24).toString("hex")}`).chat.completions.create(chat("unknown")));
    expect(unknown).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unknown.headers?.get("x-slotgate-error")).toBe("unauthorized");
    expect((unknown as InstanceType<typeof OpenAI.APIError>).type).toBe("unauthorized");

    const vk = await mint("openai-only", "openai-main");
    const wrong = await apiError(anthropicVia(stack, vk.key).messages.create({ model: ANTHROPIC_MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] }));
    expect(wrong).toBeInstanceOf(Anthropic.BadRequestError);
    expect(wrong.headers?.get("x-slotgate-error")).toBe("invalid_request");
    expect(wrong.error).toMatchObject({ error: { type: "invalid_request" } });
    expect(stack.standin.stats().attempts).toBe(before);
  });
});

describe("revocation", () => {
  it("a queued request is refused with 401 while the slots are still held, never reaching the provider; one already at the provider finishes", async () => {
    // The member's two slots are held by another virtual key of the same pool (not revoked) and by
    // the revoked key's own request already at the provider: the queued request's refusal is ordered
    // against both answers.
    const holder = openaiVia(stack, (await mint("slot-holder", "solo")).key);
    const vk = await mint("revoke-me", "solo");
    const client = openaiVia(stack, vk.key);
    await client.chat.completions.create(chat("warm"));
    // The member's own limiter key (answers name the virtual key's), once its limiter has reported it.
    let key = "";
    await eventually("the member's key listed", async () => (key = (await admin().member("solo", "only")).keys[0] ?? "") !== "");
    // Two slots on the member's limiter (an ordinary key): a third request has to queue.
    const cap = await admin().fetch("PUT", `/admin/keys/${encodeURIComponent(key)}/config`, { maxConcurrency: 2 });
    expect(cap.status, await cap.clone().text()).toBe(200);
    stack.standin.configure({ latencyMs: 8_000 });
    try {
      let holderDone = false;
      const held = holder.chat.completions.create(chat("holds the slot")).withResponse().finally(() => (holderDone = true));
      held.catch(() => {});
      let ownDone = false;
      const own = client.chat.completions.create(chat("at the provider")).withResponse().finally(() => (ownDone = true));
      own.catch(() => {});
      await eventually("both requests at the provider", async () => attemptsBy(stack, SECRETS.OPENAI_KEY_SOLO).length === 3);
      const queued = apiError(client.chat.completions.create(chat("queued")));
      await eventually("the revoked key's request to queue", async () => (await admin().member("solo", "only")).queued >= 1);
      const del = await admin().revoke("revoke-me");
      expect(del.status).toBe(204);
      const refused = await queued;
      // Refused while both slots are still held: not when it would have reached the head.
      expect(holderDone).toBe(false);
      expect(ownDone).toBe(false);
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(refused.headers?.get("x-slotgate-error")).toBe("unauthorized");
      const after = await apiError(client.chat.completions.create(chat("after")));
      expect(after.status).toBe(401);
      expect(holderDone).toBe(false);
      expect((await held).response.status).toBe(200); // another key of the pool is untouched
      expect((await own).response.status).toBe(200); // sent before the DELETE: it runs to its answer
      expect(attemptsBy(stack, SECRETS.OPENAI_KEY_SOLO)).toHaveLength(3); // warm, the holder's and its own only
      expect((await admin().list()).keys.map((k) => k.name)).not.toContain("revoke-me");
    } finally {
      stack.standin.configure({ latencyMs: LATENCY_MS });
    }
  });
});

describe("members", () => {
  it("a member out of quota is taken out (listed out, until, why), the others answer every request, and it returns once it has quota again", async () => {
    const vk = await mint("flaky-vk", "flaky");
    const client = openaiVia(stack, vk.key);
    for (let i = 0; i < 40 && byCredential(stack, SECRETS.OPENAI_KEY_BAD).attempts === 0; i++) {
      const { response } = await client.chat.completions.create(chat(`flaky ${i}`)).withResponse(); // throws unless answered
      expect(response.status).toBe(200);
    }
    expect(byCredential(stack, SECRETS.OPENAI_KEY_BAD).quotaErrors, "the bad member was tried").toBeGreaterThan(0);
    const out = await admin().member("flaky", "m-bad");
    expect(out).toMatchObject({ state: "out", reason: expect.stringMatching(/quota/i) });
    expect(Number.isFinite(Date.parse(out.until ?? ""))).toBe(true);
    expect(await admin().member("flaky", "m-good")).toMatchObject({ state: "in", until: null, reason: null });

    stack.standin.configure({ quotaExhaustedKeys: [] }); // quota bought: POOL_OUT_MS is 500, doubling per failed return
    await eventually("the member to serve again", async () => {
      const { response } = await client.chat.completions.create(chat("back")).withResponse();
      expect(response.status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      return byCredential(stack, SECRETS.OPENAI_KEY_BAD).successes > 0;
    }, 30_000);
    expect(await admin().member("flaky", "m-bad")).toMatchObject({ state: "in", until: null, reason: null });
  });

  it("an Azure member of an OpenAI pool: the request is rewritten to its deployment URL, api-version and api-key", async () => {
    const vk = await mint("azure-vk", "azure-mix");
    const client = openaiVia(stack, vk.key);
    const data = await client.chat.completions.create(chat("to azure"));
    expect(data.choices[0]!.message.content).toBe(prompt("to azure"));
    const stream = await client.chat.completions.create({ ...chat("streamed to azure"), stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(prompt("streamed to azure"));
    const sent = attemptsBy(stack, SECRETS.AZURE_KEY);
    expect(sent).toHaveLength(2);
    for (const a of sent) {
      expect(a).toMatchObject({
        provider: "azure", path: "/openai/deployments/mini-dep/chat/completions", credentialHeader: "api-key",
        extraCredentials: [], model: "mini-dep", outcome: "success",
      });
      expect(new URLSearchParams(a.query).get("api-version")).toBe(API_VERSION);
    }
  });

  it("Prometheus series of pooled requests carry pool and member labels", async () => {
    const res = await admin().fetch("GET", "/admin/metrics");
    const text = await res.text();
    expect(text).toMatch(/pool="openai-main"[^}]*member="org-(a|b)"|member="org-(a|b)"[^}]*pool="openai-main"/);
  });
});

describe("secrets", () => {
  it("no member key or virtual key in any admin answer, the dashboard, an error, an event line or the stored bytes", async () => {
    expect(minted.length).toBeGreaterThanOrEqual(8); // the tests above ran: there is something to find
    const a = admin();
    const texts: string[] = [...errorsSeen];
    const get = async (path: string) => {
      const res = await a.fetch("GET", path);
      const text = await res.text();
      texts.push(`${path} ${res.status}\n${[...res.headers].flat().join("\n")}\n${text}`);
      return { status: res.status, text };
    };
    expect((await get("/admin")).status).toBe(200); // the dashboard
    const keys = JSON.parse((await get("/admin/keys")).text) as { keys: { key: string }[] };
    expect(keys.keys.length).toBeGreaterThan(0);
    for (const { key } of keys.keys) {
      await get(`/admin/keys/${encodeURIComponent(key)}`);
      await get(`/admin/keys/${encodeURIComponent(key)}/samples`);
    }
    const pooled = await get("/admin/pools");
    expect(pooled.text).toContain("openai-main");
    for (const path of ["/admin/virtual-keys", "/admin/metrics", "/admin/cache"]) await get(path);

    const output = stack.gateway.output();
    expect(output, "the event lines are in the output being scanned").toContain('{"event":');
    const secrets = [...Object.values(SECRETS), ...Object.values(SECRETS).map((s) => s.slice(3)), ...minted.flatMap((m) => [m.key, m.key.slice(4)]), ADMIN_TOKEN];
    const where = { "admin answers and errors": texts.join("\n"), "event lines": output };
    for (const [place, text] of Object.entries(where))
      for (const s of secrets) expect(text.includes(s), `${s} in ${place}`).toBe(false);

    // The stored bytes (every Durable Object's SQLite files under wrangler's --persist-to).
    const dir = stack.gateway.persistDir;
    expect(filesContaining(dir, "ci-evals").length, "the virtual keys' store is in the scanned directory").toBeGreaterThan(0);
    for (const s of secrets) expect(filesContaining(dir, s), `${s} stored`).toEqual([]);
  });
});
