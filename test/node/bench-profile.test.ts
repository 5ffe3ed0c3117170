// What bench/profile.ts makes of a V8 CPU profile and a callgrind dump (bench/profile/): each
// sample's time on its own function and module and on every one under which it ran, placed in the
// TypeScript it came from; the instructions a dump counted.
import { describe, expect, it } from "vitest";
import { instructionsIn } from "../../bench/profile/callgrind.ts";
import { byStage, REST } from "../../bench/profile/stages.ts";
import { type CpuProfile, frameKey, type Locate, moduleOf, summarise, top } from "../../bench/profile/summary.ts";

const BUNDLE = "file:///tmp/x/.wrangler/tmp/dev-1/index.js";
/** Bundle lines 10-19 came from src/routes/proxy.ts, 20-29 from src/proxy/forward.ts. */
const locate: Locate = (url, line) => (url !== BUNDLE ? null : line < 20 ? { source: "src/routes/proxy.ts", line: line - 9 } : { source: "src/proxy/forward.ts", line: line - 19 });
const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber, columnNumber: 0 });

// (root) -> send (proxy.ts) -> upstreamHeaders (forward.ts) -> set (native); (root) -> (idle), (program), (garbage collector)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)"), children: [2, 5, 6, 7] },
    { id: 2, callFrame: frame("send", BUNDLE, 12), children: [3] },
    { id: 3, callFrame: frame("upstreamHeaders", BUNDLE, 21), children: [4] },
    { id: 4, callFrame: frame("set") },
    { id: 5, callFrame: frame("(idle)") },
    { id: 6, callFrame: frame("(program)") },
    { id: 7, callFrame: frame("(garbage collector)") },
  ],
  // Each sample's time is the gap to the next, at most the interval (400): send 100, set 300, upstreamHeaders 50,
  // idle 400 of 1,000 (the isolate was elsewhere), program 20, gc 30 (to endTime).
  samples: [2, 4, 3, 5, 6, 7],
  timeDeltas: [0, 100, 300, 50, 1_000, 20],
  startTime: 1_000,
  endTime: 2_500,
};

describe("summarise", () => {
  const s = summarise(profile, locate, 400);

  it("gives each sample the time to the next, at most the interval, on its own function (self) and on each function it ran under (inclusive)", () => {
    expect(s.totalUs).toBe(900);
    expect([s.idleUs, s.programUs, s.gcUs]).toEqual([400, 20, 30]);
    expect(s.byFunction.self.get("send (src/routes/proxy.ts:3)")).toBe(100);
    expect(s.byFunction.self.get("set (native)")).toBe(300);
    expect(s.byFunction.self.get("upstreamHeaders (src/proxy/forward.ts:2)")).toBe(50);
    expect(s.byFunction.inclusive.get("send (src/routes/proxy.ts:3)")).toBe(450);
    expect(s.byFunction.inclusive.get("upstreamHeaders (src/proxy/forward.ts:2)")).toBe(350);
  });

  it("sums by module: the runtime's builtins as one, each source file as another", () => {
    expect(s.byModule.self.get("src/proxy/forward.ts")).toBe(50);
    expect(s.byModule.self.get("(native: the runtime's builtins and APIs)")).toBe(300);
    expect(s.byModule.inclusive.get("src/routes/proxy.ts")).toBe(450);
    expect(s.byModule.inclusive.get("src/proxy/forward.ts")).toBe(350);
  });

  it("charges the runtime's APIs to the JavaScript that called them", () => {
    expect(s.charged.get("upstreamHeaders (src/proxy/forward.ts:2)")).toBe(350);
    expect(s.charged.get("send (src/routes/proxy.ts:3)")).toBe(100);
    expect(s.charged.has("set (native)")).toBe(false);
  });

  it("lists the largest per request, V8's own entries left out", () => {
    expect(top(s.byFunction.inclusive, 10, 2)).toEqual([["send (src/routes/proxy.ts:3)", 45], ["upstreamHeaders (src/proxy/forward.ts:2)", 35]]);
    expect(top(s.byFunction.self, 0, 1)).toEqual([["set (native)", 0]]);
  });

  it("counts a function once per sample when it recurs on the stack", () => {
    const rec: CpuProfile = {
      nodes: [{ id: 1, callFrame: frame("(root)"), children: [2] }, { id: 2, callFrame: frame("walk", BUNDLE, 25), children: [3] }, { id: 3, callFrame: frame("walk", BUNDLE, 25) }],
      samples: [3],
      timeDeltas: [0],
      startTime: 0,
      endTime: 70,
    };
    expect(summarise(rec, locate, 100).byFunction.inclusive.get("walk (src/proxy/forward.ts:6)")).toBe(70);
  });
});

describe("frameKey and moduleOf", () => {
  it("names workerd's own JavaScript by its URL and a bundle position without a map by its file", () => {
    expect(frameKey(frame("setTimeout", "node-internal:internal_timers", 3), locate)).toEqual({ fn: "setTimeout (node-internal:internal_timers)", module: "node-internal:internal_timers" });
    expect(frameKey(frame("fetch", "file:///x/node_modules/miniflare/do-wrapper.worker.js", 3), locate).module).toBe("do-wrapper.worker.js");
  });

  it("reads a source map's path from the repository's root", () => {
    expect(moduleOf("../../../src/proxy/forward.ts")).toBe("src/proxy/forward.ts");
    expect(moduleOf("../../node_modules/hono/dist/hono-base.js")).toBe("node_modules/hono/dist/hono-base.js");
    expect(moduleOf("wrangler://some/src/x.ts")).toBe("src/x.ts");
  });
});

describe("instructionsIn", () => {
  it("reads the Ir total of a callgrind dump", () => {
    expect(instructionsIn("version: 1\nevents: Ir\nfl=a\n0 3\ntotals: 123456789\n")).toBe(123_456_789);
    expect(instructionsIn("summary: 42\n")).toBe(42);
    expect(() => instructionsIn("events: Ir\n")).toThrow(/no totals/);
  });
});

describe("byStage", () => {
  it("puts each charged function in the first stage whose rule it meets, the rest apart, V8's own entries out", () => {
    const charged = new Map([
      ["upstreamHeaders (src/proxy/forward.ts:15)", 30],
      ["callerHeaders (src/proxy/forward.ts:27)", 20],
      ["sha256Hex16 (src/providers/key.ts:15)", 10],
      ["send2 (src/routes/proxy.ts:93)", 5],
      ["setTimeout (node-internal:internal_timers)", 4],
      ["structuredClone (node-internal:internal_utils)", 3],
      ["(program)", 100],
    ]);
    expect(byStage(charged)).toEqual([
      ["header copies and writes", 50],
      ["the credential's SHA-256 and the key", 10],
      ["the retry loop and stage glue", 5],
      ["timers", 4],
      [REST, 3],
    ]);
  });
});
