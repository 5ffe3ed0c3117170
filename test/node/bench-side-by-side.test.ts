// The overhead shape side by side (bench/side-by-side.ts): the order each round runs in, the
// gateways compared, and their rows against the plain Worker of the same rounds.
import { describe, expect, it } from "vitest";
import { compared, cpuRows, latencyRows, type Pooled, rotation, TARGETS, throughputRows } from "../../bench/side-by-side.ts";

const pooled = (ok: number, seconds: number, latency: number[], cpuMs = 0): Pooled => ({ ok, seconds, latency, key: null, cpuMs });

describe("rotation", () => {
  it("starts each round one place later, so every target goes first once in as many rounds as there are targets", () => {
    const xs = ["passthrough", "floor", "gateway", "beside:b2ddb70"];
    const firsts = [0, 1, 2, 3].map((r) => rotation(xs, r)[0]);
    expect(firsts).toEqual(xs);
    expect(rotation(xs, 0)).toEqual(xs);
    expect(rotation(xs, 1)).toEqual(["floor", "passthrough", "beside:b2ddb70", "gateway"]);
    expect(rotation(xs, 5)).toEqual(rotation(xs, 1));
    for (let r = 0; r < 6; r++) expect([...rotation(xs, r)].sort()).toEqual([...xs].sort());
    expect(rotation([], 3)).toEqual([]);
  });

  it("goes the other way round every other round, so in two rounds each target runs both before and after each other one beside it", () => {
    const xs = ["passthrough", "floor", "gateway", "beside:b2ddb70"];
    const after = (order: string[], a: string, b: string) => order.indexOf(b) === order.indexOf(a) + 1;
    const two = [rotation(xs, 0), rotation(xs, 1)];
    expect(two.some((o) => after(o, "gateway", "beside:b2ddb70"))).toBe(true);
    expect(two.some((o) => after(o, "beside:b2ddb70", "gateway"))).toBe(true);
  });
});

describe("compared", () => {
  it("is this tree's gateway alone, or first with each tree beside it reached by its name", () => {
    expect(compared(undefined)).toEqual([{ via: "gateway", name: "this tree", probe: false }]);
    expect(compared("abc1234", [{ name: "b2ddb70", probe: false }, { name: "abc1234 probe", probe: true }])).toEqual([
      { via: "gateway", name: "abc1234", probe: false },
      { via: "beside:b2ddb70", name: "b2ddb70", probe: false },
      { via: "beside:abc1234 probe", name: "abc1234 probe", probe: true },
    ]);
  });
});

describe("rows", () => {
  const gateways = compared("abc1234", [{ name: "b2ddb70", probe: false }, { name: "abc1234 probe", probe: true }]);

  it("sets each gateway's p50 against the plain Worker's of the same rounds, and holds it to issue 40's +1.5 ms", () => {
    const r = {
      passthrough: pooled(3, 1, [4, 5, 6]),
      floor: pooled(3, 1, [5, 6, 7]),
      gateway: pooled(3, 1, [6, 6.4, 7]),
      "beside:b2ddb70": pooled(3, 1, [8, 9, 10]),
      "beside:abc1234 probe": pooled(3, 1, [5, 5.5, 6]),
    };
    const { rows, data } = latencyRows("s", 1, 2.04, r, gateways);
    const added = rows.filter((x) => x.metric.startsWith("1 in flight: added"));
    expect(added.map((x) => [x.metric.match(/\[(.*)\]/)?.[1], x.value, x.pass])).toEqual([
      ["abc1234", "1.4 ms / 1.0 ms", true],
      ["b2ddb70", "4.0 ms / 4.0 ms", false],
      ["abc1234 probe", "0.5 ms / 0.0 ms", true],
    ]);
    expect(added.every((x) => x.target === `p50 <= +${TARGETS.addedP50Ms} ms`)).toBe(true);
    expect(rows[0]!.metric).toContain("(load 2.0)");
    expect((data["b2ddb70"] as { p50: number }).p50).toBe(9);
  });

  it("holds a whole gateway to 0.75x of the plain Worker's throughput and a probe to 0.9x", () => {
    const r = {
      passthrough: pooled(1_000, 2, []),
      floor: pooled(900, 2, []),
      gateway: pooled(800, 2, []),
      "beside:b2ddb70": pooled(600, 2, []),
      "beside:abc1234 probe": pooled(880, 2, []),
    };
    const { rows, data } = throughputRows("s", 48, 1, r, gateways);
    expect(rows.map((x) => [x.value, x.target, x.pass])).toEqual([
      ["400/s = 0.80x", ">= 0.75x", true],
      ["300/s = 0.60x", ">= 0.75x", false],
      ["440/s = 0.88x", ">= 0.9x", false],
    ]);
    expect(rows[2]!.metric).toContain("probe / plain Worker [abc1234 probe]; plain + 1 object call: 0.90x");
    expect(data["abc1234 ratio"]).toBeCloseTo(0.8);
  });

  it("names no tree when this tree's gateway runs alone, as the rows always read", () => {
    const r = { passthrough: pooled(10, 1, [1]), floor: pooled(10, 1, [1]), gateway: pooled(10, 1, [1]) };
    const { rows } = throughputRows("s", 32, 1, r, compared("abc1234"));
    expect(rows[0]!.metric).toBe("throughput at 32 in flight (gateway / plain Worker; plain + 1 object call: 1.00x) (load 1.0)");
  });

  it("sets each gateway's workerd CPU an answer against the plain Worker's and the floor's of the same rounds", () => {
    const r = {
      passthrough: pooled(1_000, 2, [], 4_000),
      floor: pooled(900, 2, [], 4_500),
      gateway: pooled(800, 2, [], 4_640),
      "beside:b2ddb70": pooled(600, 2, [], 3_600),
      "beside:abc1234 probe": pooled(880, 2, [], 4_400),
    };
    const { rows, data } = cpuRows("s", 48, r, gateways);
    expect(rows.map((x) => [x.metric.match(/\[(.*)\]/)?.[1], x.baseline, x.value])).toEqual([
      ["abc1234", "4.0 ms", "5.8 ms = 1.45x"],
      ["b2ddb70", "4.0 ms", "6.0 ms = 1.50x"],
      ["abc1234 probe", "4.0 ms", "5.0 ms = 1.25x"],
    ]);
    expect(rows[0]!.metric).toBe("workerd CPU an answer at 48 in flight (gateway / plain Worker [abc1234]; plain + 1 object call: 5.0 ms = 1.25x)");
    expect(rows[2]!.metric).toContain("(probe / plain Worker [abc1234 probe];");
    expect(rows.some((x) => "pass" in x)).toBe(false); // a measure beside the target, not a second target
    expect(data["abc1234"]).toBeCloseTo(5.8);
    expect(data.passthrough).toBeCloseTo(4);
  });

  it("says nothing of CPU where it was not read, and skips a gateway that has none", () => {
    const none = { passthrough: pooled(10, 1, []), floor: pooled(10, 1, []), gateway: pooled(10, 1, [], 50) };
    expect(cpuRows("s", 48, none, compared("abc1234")).rows).toEqual([]);
    const partly = { passthrough: pooled(10, 1, [], 40), floor: pooled(10, 1, []), gateway: pooled(0, 1, [], 50) };
    expect(cpuRows("s", 48, partly, compared("abc1234")).rows).toEqual([]);
    const noFloor = { passthrough: pooled(10, 1, [], 40), floor: pooled(10, 1, []), gateway: pooled(10, 1, [], 50) };
    expect(cpuRows("s", 48, noFloor, compared("abc1234")).rows.map((x) => [x.metric, x.value])).toEqual([["workerd CPU an answer at 48 in flight (gateway / plain Worker)", "5.0 ms = 1.25x"]]);
  });
});
