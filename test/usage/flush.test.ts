import { describe, expect, it } from "vitest";
import { BATCH_MAX, failed, flushDue, IDLE, nextBatch, overflow, received, RETRY_MS, taken, written } from "../../src/usage/flush";

const T0 = Date.UTC(2030, 0, 1);
const EVERY = 10_000;

describe("which batch a write carries", () => {
  const ids = () => {
    let n = 0;
    return () => `b${++n}`;
  };

  it("a new batch gets a new id and every pending record; nothing pending, no batch", () => {
    const mint = ids();
    expect(nextBatch(null, 3, (n) => 100 + n, mint)).toEqual({ batch: { id: "b1", last: 103 }, cut: false });
    expect(nextBatch(null, 0, () => 0, mint)).toBeNull();
  });

  it("an open batch (a failed try, a lost reply, a restart) is sent again: the same id and the same records, whatever came since", () => {
    const mint = ids();
    const open = nextBatch(null, 2, (n) => n, mint)!.batch;
    const again = nextBatch(open, 50, (n) => n, mint)!;
    expect(again).toEqual({ batch: { id: "b1", last: 2 }, cut: false });
    expect(mint()).toBe("b2"); // the retry minted nothing
  });

  it("a backlog goes BATCH_MAX records at a time, oldest first", () => {
    const asked: number[] = [];
    const next = nextBatch(null, BATCH_MAX + 5, (n) => (asked.push(n), 7 * n), () => "b");
    expect(next).toEqual({ batch: { id: "b", last: 7 * BATCH_MAX }, cut: true });
    expect(asked).toEqual([BATCH_MAX]);
  });
});

describe("when the pending usage is written", () => {
  it("nothing pending: never; else the interval after the first record waiting", () => {
    expect(flushDue(IDLE, 0, EVERY)).toBeNull();
    const s = received(received(IDLE, T0), T0 + 4_000);
    expect(flushDue(s, 2, EVERY)).toBe(T0 + EVERY);
  });

  it("records that come while a batch is out wait from their own arrival; a cut backlog is due at once after the write", () => {
    let s = taken(received(IDLE, T0), false);
    expect(flushDue(s, 1, EVERY)).toBeNull(); // only the batch being written
    s = received(s, T0 + 12_000);
    expect(flushDue(written(s), 1, EVERY)).toBe(T0 + 22_000);
    const backlog = taken(received(IDLE, T0), true);
    expect(flushDue(written(backlog), 5, EVERY)).toBe(T0 + EVERY);
  });

  it("a failed try is tried again RETRY_MS later, whatever came since; a success goes back to the interval", () => {
    const s = failed(received(taken(received(IDLE, T0), false), T0 + 1_000), T0 + EVERY);
    expect(flushDue(s, 3, EVERY)).toBe(T0 + EVERY + RETRY_MS);
    expect(flushDue(written(s), 2, EVERY)).toBe(T0 + 1_000 + EVERY);
  });

  it("after a restart, records left from before are due from when they were made: at once", () => {
    const restarted = received(IDLE, T0 - 60_000);
    expect(flushDue(restarted, 4, EVERY)).toBeLessThan(T0);
  });

  it("past the cap the oldest go, enough to get a step below it", () => {
    expect(overflow(100, 100, 10)).toBe(0);
    expect(overflow(101, 100, 10)).toBe(11);
  });
});
