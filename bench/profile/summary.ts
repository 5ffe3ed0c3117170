// What a V8 CPU profile of the Worker's isolate says, per request: time in each function itself
// (self) and under it (inclusive), by function and by source module, each sample placed in the
// TypeScript it came from through the bundle's source map. Pure: bench/profile.ts takes the
// profile (bench/profile/devtools.ts) and prints these.

/** A V8 CPU profile as `Profiler.stop` returns it (the fields read here). */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** µs since the previous sample (the first: since `startTime`). */
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** Where a bundle position came from: its module (e.g. `src/proxy/forward.ts`) and line, 1-based. */
export type Locate = (url: string, line: number, column: number) => { source: string; line: number } | null;

/** V8's own entries: not JavaScript of anyone's. */
const META = new Set(["(root)", "(program)", "(idle)", "(garbage collector)"]);

/** A frame's name in the tables: `fn (module:line)`, a runtime builtin as `fn (native)`, V8's own as they are. */
export function frameKey(f: ProfileNode["callFrame"], locate: Locate): { fn: string; module: string } {
  const name = f.functionName || "(anonymous)";
  if (META.has(name) && !f.url) return { fn: name, module: name };
  if (!f.url) return { fn: `${name} (native)`, module: "(native: the runtime's builtins and APIs)" };
  const at = locate(f.url, f.lineNumber, f.columnNumber);
  if (at) return { fn: `${name} (${at.source}:${at.line})`, module: at.source };
  // workerd's own JavaScript (node-internal:, cloudflare-internal:, workerd:) and miniflare's wrappers.
  const module = /^[a-z-]+:/.test(f.url) && !f.url.startsWith("file:") ? f.url : (f.url.split("/").pop() ?? f.url);
  return { fn: `${name} (${module})`, module };
}

/** The module a bundle's source-map path names, from the repository's root (`src/...`, `node_modules/...`). */
export function moduleOf(source: string): string {
  const clean = source.replace(/^[a-z-]+:\/\//, "");
  const nm = clean.lastIndexOf("node_modules/");
  if (nm >= 0) return clean.slice(nm);
  const src = clean.lastIndexOf("src/");
  if (src >= 0) return clean.slice(src);
  return clean.replace(/^(\.\.\/)+/, "");
}

export interface Tally {
  /** µs per key: in the function itself, and with everything under it (each sample once per key). */
  self: Map<string, number>;
  inclusive: Map<string, number>;
}

export interface Summary {
  /** All sampled time, µs. */
  totalUs: number;
  /** V8's own entries, µs: idle, native time outside JavaScript, garbage collection. */
  idleUs: number;
  programUs: number;
  gcUs: number;
  byFunction: Tally;
  byModule: Tally;
  /**
   * Self time with the runtime's builtins and APIs (`Headers`, `fetch`, `setTimeout`, a stream's
   * `read`) charged to the JavaScript function that called them: what each function costs, its
   * calls into workerd included.
   */
  charged: Map<string, number>;
}

/**
 * Each sample's time is the gap to the next one (the last sample's, the gap to `endTime`), at most
 * the sampling interval: workerd samples only while its isolate runs, so a long gap is time spent
 * elsewhere (waiting, other isolates), not in the sample before it. The time goes on the sample's
 * node (self) and on every distinct function and module on its stack (inclusive).
 */
export function summarise(p: CpuProfile, locate: Locate, intervalUs: number): Summary {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const keys = new Map<number, { fn: string; module: string }>();
  const keyOf = (id: number) => {
    let k = keys.get(id);
    if (!k) keys.set(id, (k = frameKey(byId.get(id)!.callFrame, locate)));
    return k;
  };
  const out: Summary = { totalUs: 0, idleUs: 0, programUs: 0, gcUs: 0, byFunction: { self: new Map(), inclusive: new Map() }, byModule: { self: new Map(), inclusive: new Map() }, charged: new Map() };
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  let at = p.startTime;
  const times = p.samples.map((_, i) => (at += p.timeDeltas[i] ?? 0));
  for (let i = 0; i < p.samples.length; i++) {
    const us = Math.min(intervalUs, Math.max(0, (i + 1 < times.length ? times[i + 1]! : p.endTime) - times[i]!));
    const id = p.samples[i]!;
    const own = keyOf(id);
    out.totalUs += us;
    if (own.fn === "(idle)") out.idleUs += us;
    else if (own.fn === "(program)") out.programUs += us;
    else if (own.fn === "(garbage collector)") out.gcUs += us;
    add(out.byFunction.self, own.fn, us);
    add(out.byModule.self, own.module, us);
    let payer = id;
    while (keyOf(payer).fn.endsWith(" (native)") && parent.has(payer)) payer = parent.get(payer)!;
    add(out.charged, keyOf(payer).fn, us);
    const fns = new Set<string>();
    const modules = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const k = keyOf(n);
      fns.add(k.fn);
      modules.add(k.module);
    }
    for (const f of fns) add(out.byFunction.inclusive, f, us);
    for (const m of modules) add(out.byModule.inclusive, m, us);
  }
  return out;
}

/** The `n` largest entries of a tally, µs per request (V8's own entries left out). */
export function top(m: Map<string, number>, requests: number, n: number): [string, number][] {
  return [...m]
    .filter(([k]) => !META.has(k))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => [k, requests > 0 ? us / requests : 0]);
}
