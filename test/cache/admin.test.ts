// GET/DELETE /admin/cache and the cache's Prometheus families, through the Worker in workerd.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHAT } from "../support/upstream";
import { admin, caller, nsStats, numbered, stats, stored } from "../support/cache";

afterEach(() => vi.restoreAllMocks());

describe("cache: admin", () => {
  it("GET /admin/cache counts entries, bytes, hits and misses per namespace; DELETE purges one namespace or all", async () => {
    numbered();
    const a = caller();
    const b = caller();
    await a.send();
    await b.send();
    await stored(a.ns);
    await stored(b.ns);
    await a.send();
    await vi.waitFor(async () => expect(await nsStats(a.ns)).toMatchObject({ entries: 1, hits: 1, misses: 1 }));
    const s = await nsStats(a.ns);
    expect(s!.bytes).toBe(JSON.stringify({ ...CHAT, id: "chatcmpl-1" }).length);
    const all = await stats();
    expect(all.entries).toBeGreaterThanOrEqual(2);
    expect(all.hitRatio).toBeGreaterThan(0);

    const purged = await (await admin(`/admin/cache?namespace=${a.ns}`, "DELETE")).json();
    expect(purged).toEqual({ namespace: a.ns, deleted: 1 });
    expect((await nsStats(a.ns))!.entries).toBe(0);
    expect((await a.send()).cache).toBe("miss");
    expect((await b.send()).cache).toBe("hit");
    expect((await admin("/admin/cache?namespace=bad%20name", "DELETE")).status).toBe(400);
    await stored(a.ns);
    await admin("/admin/cache", "DELETE");
    expect((await stats()).entries).toBe(0);
    expect((await b.send()).cache).toBe("miss");
  });

  it("GET /admin/metrics has slotgate_cache_requests_total by result and the stored bytes", async () => {
    numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    await c.send();
    await vi.waitFor(async () => expect((await nsStats(c.ns))?.hits).toBe(1));
    const text = await (await admin("/admin/metrics")).text();
    for (const r of ["hit", "miss", "collapsed", "bypass"]) expect(text).toMatch(new RegExp(`^slotgate_cache_requests_total\\{result="${r}"\\} \\d+$`, "m"));
    expect(Number(/^slotgate_cache_requests_total\{result="hit"\} (\d+)$/m.exec(text)![1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^slotgate_cache_stored_bytes (\d+)$/m.exec(text)![1])).toBeGreaterThan(0);
  });
});

