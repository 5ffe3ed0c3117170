// Nothing a holder of one virtual key can send takes a pool's members out for the others: only the
// provider's own evidence that a key cannot be used does (its codes, never its messages), and one
// request takes at most one member out.
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { directoryOf, RECENT_MAX } from "../../src/directory/object";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { ADMIN, call, mint, memberOf } from "../support/vk";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

const QUOTA = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };

type Member = { name: string; state: string; reason: string | null };
async function duoMembers(): Promise<Member[]> {
  const pools = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: ADMIN })).json()) as { pools: { name: string; members: Member[] }[] };
  return pools.pools.find((p) => p.name === "duo")!.members;
}

/** Answers the body's model `trap` with `trap(model)`; everything else is a plain answer. */
function provider(trap: (model: string, member: string) => Response | null) {
  return mockUpstream(async (req) => {
    const { model } = (await req.clone().json()) as { model: string };
    return trap(model, memberOf(req.headers)) ?? json(CHAT);
  });
}

describe("provoked outs", () => {
  it("a 400 or 429 whose message names insufficient_quota (the caller's model, echoed) takes no member out", async () => {
    // Both statuses carry hard quota when its code says so: only the code may decide, never the echo.
    const { calls } = provider((model) =>
      model.includes("insufficient_quota")
        ? model.endsWith("400")
          ? json({ error: { message: `Invalid value for 'model': ${model} (insufficient_quota) is not supported with this endpoint.`, type: "invalid_request_error", param: "model", code: null } }, 400)
          : json({ error: { message: `Rate limit reached for ${model} in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.`, type: "requests", param: null, code: "rate_limit_exceeded" } }, 429)
        : null,
    );
    const vk = await mint("duo");
    const noRetry = { "x-slotgate-max-attempts": "1" };
    for (let i = 0; i < 3; i++) {
      expect((await call(vk.key, { model: "insufficient_quota-400", headers: noRetry })).status).toBe(400);
      expect((await call(vk.key, { model: "insufficient_quota-429", headers: noRetry })).status).toBe(429);
    }
    // Each probe went to one member and was answered there: no walk over the pool.
    expect(calls).toHaveLength(6);
    calls.length = 0;
    for (let i = 0; i < 12; i++) expect((await call(vk.key, { model: "gpt-provoke" })).status).toBe(200);
    expect(new Set(calls.map((c) => memberOf(c.headers)))).toEqual(new Set(["a", "b"]));
    expect((await duoMembers()).map((m) => m.state)).toEqual(["in", "in"]);
  });

  it("a 401 for a missing permission and a 403 for a model are the caller's answers, not a member's out", async () => {
    const { calls } = provider((model, member) => {
      if (model === "needs-permission") return json({ error: { message: "You have insufficient permissions for this operation. Missing scopes: api.model.request.", type: "invalid_request_error", param: null, code: null } }, 401);
      if (model === "forbidden-model") return json({ error: { message: `Project proj_${member} does not have access to model ${model}`, type: "invalid_request_error", param: null, code: "model_not_found" } }, 403);
      return null;
    });
    const vk = await mint("duo");
    for (let i = 0; i < 4; i++) {
      expect((await call(vk.key, { model: "needs-permission" })).status).toBe(401);
      expect((await call(vk.key, { model: "forbidden-model" })).status).toBe(403);
    }
    expect(calls).toHaveLength(8);
    expect((await duoMembers()).map((m) => m.state)).toEqual(["in", "in"]);
  });

  it("a body every member answers with hard quota takes one member out, not the pool", async () => {
    const { calls } = provider((model) => (model === "poison" ? json(QUOTA, 429) : null));
    const vk = await mint("duo");
    const res = await call(vk.key, { model: "poison" });
    expect(res.status).toBe(429);
    // The first member went out and the request moved once; the second's answer is the caller's.
    expect(calls.map((c) => memberOf(c.headers)).sort()).toEqual(["a", "b"]);
    const states = (await duoMembers()).filter((m) => m.state === "out");
    expect(states).toHaveLength(1);
    expect(states[0]!.reason).toBe("insufficient_quota");
    // Its key for this model comes back once a probe is answered: the next test reads the members' view.
    vi.restoreAllMocks();
    mockUpstream(() => json(CHAT));
    await vi.waitFor(async () => {
      await call(vk.key, { model: "poison" });
      expect((await duoMembers()).map((m) => m.state)).toEqual(["in", "in"]);
    }, { timeout: 10_000, interval: 250 });
  });

  it("the real thing still works: a member whose key is invalid goes out and the request is answered by the other", async () => {
    const { calls } = mockUpstream((req) =>
      memberOf(req.headers) === "a"
        ? json({ error: { message: "Incorrect API key provided: sk-poo***aaaa.", type: "invalid_request_error", param: null, code: "invalid_api_key" } }, 401)
        : json(CHAT),
    );
    const vk = await mint("duo");
    const toA = () => calls.filter((c) => memberOf(c.headers) === "a").length;
    // The router draws its members at random: ask until it has drawn a (its 401 is retried at b).
    for (let i = 0; i < 40 && toA() === 0; i++) expect((await call(vk.key, { model: "gpt-invalid-a" })).status).toBe(200);
    expect(toA()).toBe(1);
    // Out from then on: every request answered by b.
    for (let i = 0; i < 8; i++) expect((await call(vk.key, { model: "gpt-invalid-a" })).status).toBe(200);
    expect(toA()).toBe(1);
  });
});

describe("the operator's view of the members (issue 33)", () => {
  // Some hundreds of Directory reports, one by one: seconds on a loaded machine.
  it("shows an out member as out however many newer keys others have made", { timeout: 30_000 }, async () => {
    const { calls } = provider((model, member) => (model === "poison-a" && member === "a" ? json(QUOTA, 429) : null));
    const vk = await mint("duo");
    // Both members have served, so each has a key listed.
    for (let i = 0; i < 4; i++) expect((await call(vk.key)).status).toBe(200);
    // More keys than a metrics scrape lists, all seen after the members': other tenants' labels and models.
    const dir = directoryOf(env.DIRECTORY);
    const later = Date.now() + 60_000;
    for (let i = 0; i < RECENT_MAX + 50; i++) await dir.report({ key: `openai:flood-${i}:${i.toString(16).padStart(16, "0")}`, provider: "openai", model: `flood-${i}`, limit: 1, inFlight: 0, queued: 0, lastSeen: later + i });
    // Member a goes out on its own hard quota.
    for (let i = 0; i < 6 && !calls.some((c) => memberOf(c.headers) === "a" && c.body.includes("poison-a")); i++) await call(vk.key, { model: "poison-a" });
    await vi.waitFor(async () => expect((await duoMembers()).map((m) => [m.name, m.state])).toEqual([["org-a", "out"], ["org-b", "in"]]));
  });
});
