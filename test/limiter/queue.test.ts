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
