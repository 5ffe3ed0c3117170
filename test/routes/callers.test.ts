// The proxy route with callers: header validation, PRIORITY_WEIGHTS, the pacing hints on answers,
// and callers in the admin state (labels and token hashes, never a token).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_CALLERS } from "../../src/limiter/callers";
import type { Limiter } from "../../src/limiter/object";
import type { LimiterSnapshot } from "../../src/limiter/types";
import { callWith as call } from "../support/app";
import { CHAT, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

const post = (key: string, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
  body: JSON.stringify({ model: "gpt-4o-mini", messages: [], max_tokens: 16 }),
});
const CHATS = "/openai/v1/chat/completions";
const state = async (key: string) =>
  (await (await call(`/admin/keys/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` } })).json()) as LimiterSnapshot;

describe("callers on the proxy route", () => {
  it.each([
    [{ "x-slotgate-caller": "no spaces" }, /x-slotgate-caller/],
    [{ "x-slotgate-caller": "x".repeat(129) }, /x-slotgate-caller/],
    [{ "x-slotgate-priority": "urgent" }, /x-slotgate-priority/],
  ])("a malformed %j gets 400 invalid_request and nothing is sent", async (headers, message) => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(CHATS, post("sk-callers-bad", headers));
    expect(res.status).toBe(400);
    expect(res.headers.get("x-slotgate-error")).toBe("invalid_request");
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(calls).toHaveLength(0);
  });

  it("a malformed PRIORITY_WEIGHTS gets 500 config_error naming it, and nothing is sent", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(CHATS, post("sk-callers-cfg"), { PRIORITY_WEIGHTS: "8:4" });
    expect(res.status).toBe(500);
    expect(res.headers.get("x-slotgate-error")).toBe("config_error");
    expect(await res.text()).toContain("PRIORITY_WEIGHTS");
    expect(calls).toHaveLength(0);
  });

  it("every answer carries x-slotgate-limit; x-slotgate-rate once the provider has reported a quota", async () => {
    mockUpstream(() => json(CHAT, 200, { "x-ratelimit-limit-requests": "1200", "x-ratelimit-remaining-requests": "1100", "x-ratelimit-reset-requests": "5s" }));
    const first = await call(CHATS, post("sk-callers-hints"));
    expect(first.headers.get("x-slotgate-limit")).toMatch(/^\d+$/);
    expect(first.headers.get("x-slotgate-rate")).toBeNull(); // granted before any reading came back
    const second = await call(CHATS, post("sk-callers-hints"));
    expect(second.headers.get("x-slotgate-rate")).toBe("1200");
    vi.restoreAllMocks();
    mockUpstream(() => json({ error: { message: "bad" } }, 400));
    const failed = await call(CHATS, post("sk-callers-hints"));
    expect(failed.status).toBe(400);
    expect(failed.headers.get("x-slotgate-limit")).toMatch(/^\d+$/);
  });

  it("the admin state lists callers by label, lane and share; a gateway token shows only as its hash", async () => {
    mockUpstream(() => json(CHAT));
    const vars = { GATEWAY_TOKENS: "tok-caller-secret" };
    const a = await call(CHATS, post("sk-callers-admin", { "x-slotgate-caller": "nightly-evals", "x-slotgate-priority": "low", "x-slotgate-token": "tok-caller-secret" }), vars);
    await call(CHATS, post("sk-callers-admin", { "x-slotgate-token": "tok-caller-secret" }), vars);
    await call(CHATS, post("sk-callers-admin", { "x-slotgate-token": "tok-caller-secret" }), vars);
    const s = await state(a.headers.get("x-slotgate-key")!);
    const rows = s.callers.map((c) => [c.caller, c.lane, c.served]);
    // A label names a caller within its token (issue 33): it never takes another token's identity.
    expect(rows).toEqual([
      [expect.stringMatching(/^token:[0-9a-f]{16}$/), "normal", 2],
      [expect.stringMatching(/^token:[0-9a-f]{16}\/nightly-evals$/), "low", 1],
    ]);
    expect(rows[1]![0]).toBe(`${rows[0]![0]}/nightly-evals`);
    expect(s.callers[0]!.share).toBeCloseTo(2 / 3, 2);
    expect(JSON.stringify(s)).not.toContain("tok-caller-secret");
  });
});

describe("caller names in the ledger (issue 33)", () => {
  it("a flood of caller names makes no more ledger rows than a key has callers: past MAX_CALLERS they are the overflow caller", async () => {
    mockUpstream(() => json({ ...CHAT, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    const since = Date.now() - 60_000;
    const names = MAX_CALLERS + 40;
    let key = "";
    for (let i = 0; i < names; i += 24) {
      const wave = Array.from({ length: Math.min(24, names - i) }, (_, j) => call(CHATS, post("sk-callers-flood", { "x-slotgate-caller": `sprayed-${i + j}` })));
      key = (await Promise.all(wave))[0]!.headers.get("x-slotgate-key")!;
    }
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    // Every answer's record reaches the ledger (the object's own flush may have sent some already).
    let rows: { caller: string | null; requests: number }[] = [];
    await vi.waitFor(async () => {
      await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
      const res = await call(`/admin/usage?since=${since}&by=caller`, { headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` } });
      // This flood's callers only: the file's other tests count their own in the same minute.
      rows = ((await res.json()) as { rows: typeof rows }).rows.filter((r) => r.caller === "(overflow)" || r.caller?.startsWith("sprayed-"));
      expect(rows.reduce((a, r) => a + r.requests, 0)).toBe(names);
    });
    const callers = new Set(rows.map((r) => r.caller));
    expect(callers.size).toBeLessThanOrEqual(MAX_CALLERS + 1);
    expect(callers.has("(overflow)")).toBe(true);
  }, 30_000);
});
