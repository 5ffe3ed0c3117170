import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { type Directory, type DirectoryEntry, directoryOf, LABELS_PER_CREDENTIAL, LIST_MAX, RETENTION_MS } from "../../src/directory/object";
import type { Limiter } from "../../src/limiter/object";
import type { AcquireRequest, SettleRequest } from "../../src/limiter/types";

let n = 0;
/** A private Directory instance per test, so lists are exact. */
const fresh = () => env.DIRECTORY.get(env.DIRECTORY.idFromName(`test-directory-${++n}`));
const entry = (key: string, lastSeen: number, o: Partial<DirectoryEntry> = {}): DirectoryEntry => ({
  key, provider: "openai", model: "m", limit: 4, inFlight: 0, queued: 0, lastSeen, ...o,
});

describe("Directory Durable Object", () => {
  it("upserts reports and lists newest lastSeen first", async () => {
    const dir = fresh();
    await dir.report(entry("a", 1_000));
    await dir.report(entry("b", 3_000));
    await dir.report(entry("c", 2_000));
    await dir.report(entry("a", 4_000, { limit: 9, inFlight: 2, queued: 1 }));
    const { entries, total } = await dir.list();
    expect(total).toBe(3);
    expect(entries.map((e) => e.key)).toEqual(["a", "b", "c"]);
    expect(entries[0]).toEqual(entry("a", 4_000, { limit: 9, inFlight: 2, queued: 1 }));
    expect(await dir.get("b")).toEqual(entry("b", 3_000));
    expect(await dir.get("nope")).toBeNull();
  });

  it("a late, older report never moves a key back", async () => {
    const dir = fresh();
    await dir.report(entry("a", 5_000, { limit: 10 }));
    await dir.report(entry("a", 4_000, { limit: 3 }));
    expect(await dir.get("a")).toMatchObject({ lastSeen: 5_000, limit: 10 });
  });

  it("caps the list and keeps its entries across a restart", async () => {
    const dir = fresh();
    for (let i = 0; i < LIST_MAX + 5; i++) await dir.report(entry(`k${i}`, 10_000 + i));
    const { entries, total } = await dir.list(LIST_MAX + 100);
    expect(total).toBe(LIST_MAX + 5);
    expect(entries).toHaveLength(LIST_MAX);
    expect(entries[0]!.key).toBe(`k${LIST_MAX + 4}`);
    expect((await dir.list(2)).entries.map((e) => e.key)).toEqual([`k${LIST_MAX + 4}`, `k${LIST_MAX + 3}`]);
    await evictDurableObject(dir);
    expect((await dir.list()).total).toBe(LIST_MAX + 5);
  });

  it("caps its rows: past the cap the least recently seen go, however many new keys come", async () => {
    const dir = fresh();
    await runInDurableObject(dir, (d: Directory) => {
      d.maxRows = 3;
    });
    for (let i = 0; i < 8; i++) await dir.report(entry(`k${i}`, 10_000 + i));
    await dir.report(entry("k7", 20_000)); // an update adds no row
    const { entries, total } = await dir.list();
    expect(total).toBe(3);
    expect(entries.map((e) => e.key)).toEqual(["k7", "k6", "k5"]);
  });

  it("admits at most LABELS_PER_CREDENTIAL labels per credential; a known one always, another credential's apart; unused ones are forgotten (issue 33)", async () => {
    const dir = fresh();
    const t = 1_000_000_000;
    for (let i = 0; i < LABELS_PER_CREDENTIAL; i++) expect(await dir.admitLabel("openai:aaaa", `run-${i}`, t)).toBe(true);
    expect(await dir.admitLabel("openai:aaaa", "one-more", t)).toBe(false);
    expect(await dir.admitLabel("openai:aaaa", "run-7", t + 1)).toBe(true);
    expect(await dir.admitLabel("openai:bbbb", "one-more", t)).toBe(true);
    // A month later, the labels not used since are forgotten: room again.
    expect(await dir.admitLabel("openai:aaaa", "later", t + RETENTION_MS + 3_600_001)).toBe(true);
  });

  it("lists a credential's own keys whatever others have flooded it with (issue 33)", async () => {
    const dir = fresh();
    await dir.report(entry("openai:gpt-4o-mini:member0000000001", 1_000));
    await dir.report(entry("anthropic:claude:member0000000001", 1_500, { provider: "anthropic" }));
    for (let i = 0; i < 1_200; i++) await dir.report(entry(`openai:flood-${i}:stranger00000000${i}`, 2_000 + i));
    expect((await dir.recent()).entries.some((e) => e.key.endsWith("member0000000001"))).toBe(false);
    expect(await dir.keysOf(["openai:member0000000001", "openai:nobody"])).toEqual({ "openai:member0000000001": ["openai:gpt-4o-mini:member0000000001"], "openai:nobody": [] });
  });

  it("forgets keys unseen for the retention period", async () => {
    const dir = fresh();
    const day = 86_400_000;
    await dir.report(entry("old", 1_000));
    await dir.report(entry("new", 1_000 + 31 * day));
    expect((await dir.list()).entries.map((e) => e.key)).toEqual(["new"]);
  });
});

describe("Limiter → Directory registration", () => {
  const req = (key: string, leaseId: string): AcquireRequest => ({
    key, provider: "anthropic", model: "claude-x", leaseId, cost: 10, retry: false, waitMs: 5_000,
  });
  const outcome = (status: number, cls: SettleRequest["cls"]): SettleRequest => ({
    cls, status, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true,
  });

  it("registers on first traffic, then refreshes at most every 15 s, from inside the object", async () => {
    const key = `anthropic:claude-x:${"ab".repeat(8)}`;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    const dir = directoryOf(env.DIRECTORY);
    const base = Date.now();
    let now = base;
    await runInDurableObject(stub, (obj: Limiter) => {
      obj.now = () => now;
    });
    await stub.acquire(req(key, "a"));
    await stub.settle("a", outcome(200, "success")); // listed from the key's first 2xx
    await vi.waitFor(async () => expect(await dir.get(key)).toEqual({ key, provider: "anthropic", model: "claude-x", limit: 16, inFlight: 0, queued: 0, lastSeen: base }));

    now = base + 5_000;
    await stub.acquire(req(key, "b"));
    await new Promise((r) => setTimeout(r, 50));
    expect(await dir.get(key)).toMatchObject({ lastSeen: base }); // throttled: no report
    expect((await stub.state()).lastSeen).toBe(new Date(base + 5_000).toISOString()); // the limiter itself knows

    now = base + 16_000;
    await stub.acquire(req(key, "c"));
    await vi.waitFor(async () => expect(await dir.get(key)).toMatchObject({ lastSeen: base + 16_000, inFlight: 1 })); // b (a was answered)
  });

  it("reports again after a restart, so a limiter older than the Directory gets listed", async () => {
    const key = `anthropic:claude-x:${"cd".repeat(8)}`;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    await stub.acquire(req(key, "a"));
    await stub.settle("a", outcome(200, "success"));
    const dir = directoryOf(env.DIRECTORY);
    await vi.waitFor(async () => expect(await dir.get(key)).not.toBeNull());
    const first = (await dir.get(key))!.lastSeen;
    await evictDurableObject(stub);
    await new Promise((r) => setTimeout(r, 5));
    await stub.acquire(req(key, "b"));
    await vi.waitFor(async () => expect((await dir.get(key))!.lastSeen).toBeGreaterThan(first));
  });

  it("a key that never had a 2xx is never listed, and its Limiter writes nothing; its first 2xx lists it and keeps it", async () => {
    const key = `anthropic:claude-x:${"9a".repeat(8)}`;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    await stub.acquire(req(key, "a"));
    await stub.settle("a", outcome(401, "fatal"));
    await stub.acquire(req(key, "b"));
    await stub.settle("b", outcome(429, "rate_limit"));
    await stub.acquire(req(key, "held"));
    await new Promise((r) => setTimeout(r, 50));
    expect(await directoryOf(env.DIRECTORY).get(key)).toBeNull();
    const stored = () => runInDurableObject(stub, (_: Limiter, state: DurableObjectState) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master").one().n);
    expect(await stored()).toBe(0);
    const alarm = () => runInDurableObject(stub, (_: Limiter, state: DurableObjectState) => state.storage.getAlarm());
    expect(await alarm()).toBeNull(); // its held lease is swept by an in-memory timer, not a stored alarm
    // Forgotten with its object: nothing of it comes back after an eviction.
    await stub.release("held");
    await evictDurableObject(stub);
    expect((await stub.state()).history).toEqual([]);
    expect(await stored()).toBe(0);

    await stub.acquire(req(key, "c"));
    await stub.acquire(req(key, "d"));
    await stub.settle("c", outcome(200, "success"));
    await vi.waitFor(async () => expect(await directoryOf(env.DIRECTORY).get(key)).not.toBeNull());
    expect(await stored()).toBeGreaterThan(0);
    expect(await alarm()).not.toBeNull(); // the lease still held is now swept by a stored alarm
    await stub.release("d");
    await evictDurableObject(stub);
    expect((await stub.state()).key).toBe(key);
  });

  it("a batch of releases alone does not move lastSeen", async () => {
    const key = `anthropic:claude-x:${"9b".repeat(8)}`;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    let now = Date.now();
    await runInDurableObject(stub, (obj: Limiter) => {
      obj.now = () => now;
    });
    const first = now;
    await stub.exchange(req(key, "x"), [{ t: "acquire", req: { leaseId: "x", cost: 1, retry: false, waitMs: 1_000 } }]);
    now += 10_000;
    await stub.exchange(req(key, "x"), [{ t: "release", id: "x" }]);
    expect((await stub.state()).lastSeen).toBe(new Date(first).toISOString());
  });

  it("state() and other admin reads do not register anything", async () => {
    const key = `anthropic:claude-x:${"ef".repeat(8)}`;
    await env.LIMITER.get(env.LIMITER.idFromName(key)).state();
    await new Promise((r) => setTimeout(r, 50));
    expect(await directoryOf(env.DIRECTORY).get(key)).toBeNull();
  });
});
