import { describe, expect, it } from "vitest";
import { type Waiter, WaitQueue } from "../../src/limiter/queue";

const w = (id: string, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 1, deadline: 1_000, retry: false, enqueuedAt: 0, ...o });
const ids = (q: WaitQueue) => [...q].map((x) => x.id);

describe("WaitQueue", () => {
  it("serves fresh arrivals in arrival order", () => {
    const q = new WaitQueue();
    for (const id of ["a", "b", "c"]) q.push(w(id));
    expect([q.shift()!.id, q.shift()!.id, q.shift()!.id]).toEqual(["a", "b", "c"]);
    expect(q.shift()).toBeUndefined();
  });

  it("puts a retry ahead of every fresh waiter, and retries in their own order", () => {
    const q = new WaitQueue();
    q.push(w("a"));
    q.push(w("b"));
    q.push(w("r1", { retry: true }));
    q.push(w("c"));
    q.push(w("r2", { retry: true }));
    expect(ids(q)).toEqual(["r1", "r2", "a", "b", "c"]);
    expect(q.peek()!.id).toBe("r1");
  });

  it("removes a cancelled waiter wherever it stands", () => {
    const q = new WaitQueue();
    q.push(w("a"));
    q.push(w("r", { retry: true }));
    q.push(w("b"));
    expect(q.remove("a")!.id).toBe("a");
    expect(q.remove("r")!.id).toBe("r");
    expect(q.remove("zzz")).toBeUndefined();
    expect(ids(q)).toEqual(["b"]);
    expect(q.has("b")).toBe(true);
    expect(q.has("a")).toBe(false);
  });

  it("expires exactly the waiters at or past their deadline, keeping the others in order", () => {
    const q = new WaitQueue();
    q.push(w("a", { deadline: 100 }));
    q.push(w("b", { deadline: 300 }));
    q.push(w("r", { retry: true, deadline: 200 }));
    q.push(w("c", { deadline: 50 }));
    expect(q.earliestDeadline()).toBe(50);
    expect(q.takeExpired(100).map((x) => x.id)).toEqual(["a", "c"]);
    expect(ids(q)).toEqual(["r", "b"]);
    expect(q.takeExpired(199)).toEqual([]);
    expect(q.takeExpired(200).map((x) => x.id)).toEqual(["r"]);
    expect(q.size).toBe(1);
  });

  it("drains everyone in order and is empty after", () => {
    const q = new WaitQueue();
    q.push(w("a"));
    q.push(w("r", { retry: true }));
    expect(q.drain().map((x) => x.id)).toEqual(["r", "a"]);
    expect(q.size).toBe(0);
    expect(q.earliestDeadline()).toBeNull();
  });
});

/** Waiter `id` of `caller` in `lane`; cost 1 unless told. */
const of = (caller: string | undefined, id: string, o: Partial<Waiter> = {}): Waiter => w(id, { caller, ...o });
const serve = (q: WaitQueue, n = q.size) => Array.from({ length: n }, () => q.shift()!.id);

describe("WaitQueue: fair shares between callers", () => {
  it("takes turns between callers of one lane, each caller in its own arrival order", () => {
    const q = new WaitQueue();
    for (const id of ["a1", "a2", "a3"]) q.push(of("a", id));
    for (const id of ["b1", "b2"]) q.push(of("b", id));
    expect(q.peek()!.id).toBe("a1");
    expect(serve(q)).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });

  it("counts shares in tokens: a caller of half-size requests gets two turns for one", () => {
    const q = new WaitQueue();
    for (let i = 0; i < 4; i++) q.push(of("big", `B${i}`, { cost: 100 }));
    for (let i = 0; i < 8; i++) q.push(of("small", `s${i}`, { cost: 50 }));
    expect(serve(q, 9)).toEqual(["B0", "s0", "s1", "B1", "s2", "s3", "B2", "s4", "s5"]);
  });

  it("weighs lanes 8:4:1 by default, never strictly: the low lane goes too", () => {
    const q = new WaitQueue();
    for (const lane of ["high", "normal", "low"] as const) for (let i = 0; i < 40; i++) q.push(of(lane, `${lane}${i}`, { lane }));
    const first = serve(q, 26);
    const count = (lane: string) => first.filter((id) => id.startsWith(lane)).length;
    expect([count("high"), count("normal"), count("low")]).toEqual([16, 8, 2]);
  });

  it("takes its weights from PRIORITY_WEIGHTS", () => {
    const q = new WaitQueue({ high: 1, normal: 1, low: 1 });
    for (const lane of ["high", "low"] as const) for (let i = 0; i < 3; i++) q.push(of(lane, `${lane}${i}`, { lane }));
    expect(serve(q)).toEqual(["high0", "low0", "high1", "low1", "high2", "low2"]);
  });

  it("a caller with one request goes at the next turn, not behind another caller's backlog", () => {
    const q = new WaitQueue();
    for (let i = 0; i < 100; i++) q.push(of("batch", `b${i}`, { lane: "low" }));
    serve(q, 10);
    q.push(of("dev", "d1"));
    expect(q.shift()!.id).toBe("d1");
    serve(q, 5);
    q.push(of("dev2", "x1", { lane: "low" })); // the same lane as the backlog: still its own turn
    expect(q.shift()!.id).toBe("x1");
  });

  it("a caller that refills its line as soon as it is served does not starve a backlogged one", () => {
    const q = new WaitQueue();
    for (let i = 0; i < 20; i++) q.push(of("a", `a${i}`));
    const out: string[] = [];
    for (let i = 0; i < 20; i++) {
      q.push(of("b", `b${i}`)); // b's line is empty each time it is served, and refilled at once
      out.push(q.shift()!.id);
    }
    expect(out.filter((id) => id.startsWith("a")).length).toBe(10);
  });

  it("a retry goes to the head of its own caller's line, not ahead of other callers' turns", () => {
    const q = new WaitQueue();
    q.push(of("a", "a1"));
    q.push(of("b", "b1"));
    q.push(of("a", "a2"));
    expect(q.shift()!.id).toBe("a1");
    q.push(of("a", "a1:2", { retry: true }));
    expect(serve(q)).toEqual(["b1", "a1:2", "a2"]);
  });

  it("removes, expires and counts per caller; an emptied queue forgets every share", () => {
    const q = new WaitQueue();
    q.push(of("a", "a1", { deadline: 100 }));
    q.push(of("a", "a2", { deadline: 300 }));
    q.push(of("b", "b1", { deadline: 200, lane: "high" }));
    q.push(of(undefined, "d1", { deadline: 50 }));
    expect(q.queuedBy()).toEqual(new Map([["b", 1], ["a", 2], ["(default)", 1]]));
    expect(q.remove("a2")!.id).toBe("a2");
    expect(q.takeExpired(150).map((x) => x.id).sort()).toEqual(["a1", "d1"]);
    expect(q.earliestDeadline()).toBe(200);
    expect(ids(q)).toEqual(["b1"]);
    expect(q.shift()!.id).toBe("b1");
    expect(q.size).toBe(0);
    // Nobody waits: the next arrivals start even, whatever was served before.
    q.push(of("b", "b2"));
    q.push(of("a", "a3"));
    expect(q.shift()!.id).toBe("b2");
  });

  it("standing: a caller's own line and its least share (lane weight over the busy lanes, split between the lane's busy callers)", () => {
    const q = new WaitQueue();
    for (let i = 0; i < 5; i++) q.push(of("batch", `b${i}`, { lane: "low" }));
    for (let i = 0; i < 2; i++) q.push(of("other", `o${i}`, { lane: "low" }));
    expect(q.standing("batch", "low")).toEqual({ ahead: 5, share: 1 / 2 });
    expect(q.standing("dev", "normal")).toEqual({ ahead: 0, share: 4 / 5 });
    expect(q.standing("new", "low")).toEqual({ ahead: 0, share: 1 / 3 });
  });
});
