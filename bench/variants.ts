// The variants bench/points.ts runs (its header says what each is): the probe of this tree
// (bench/trees.ts) with one change written over the copy, never into src/. A change whose anchor
// is not in the tree once fails loudly: the tree has moved on, and the variant must move with it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { here, probe, type Tree } from "./trees.ts";

/** Every variant by name (`after:<stage>` for each stage of the list): what `npm run points` runs by default, and the test applies. */
export const VARIANTS = ["after:gated", "probe", "native", "tee", "read-then-tee", "array-buffer"] as const;

/** A change written over a copy of a file: `find` must be there once, or the variant fails (the tree moved on). */
export interface Patch {
  file: string;
  find: string;
  put: (found: string) => string;
}

const SETTLE = "src/proxy/steps.ts";
const READ_WHOLE_AT = "  let body = res.body;\n  let held = false;\n";
const SHORT = `
// bench/points.ts: answers as the plain Worker does, from wherever it is put in the list.
const short = async (call: { req: Request; bytes: Uint8Array; env: unknown }) => {
  const u = new URL(call.req.url);
  const url = (call.env as { POINTS_UPSTREAM: string }).POINTS_UPSTREAM + u.pathname.replace(/^\\/openai(?=\\/)/, "") + u.search;
  if (call.bytes.byteLength === 0 && call.req.body) return fetch(new Request(url, call.req));
  return fetch(url, { method: call.req.method, headers: call.req.headers, body: call.bytes });
};
`;

/** The tee: the caller gets the answer as it comes; a copy is read, metered and settled (`wait`: before the answer goes). */
const tee = (wait: boolean) =>
  `  if (!streaming && res.body) {
    const [out, copy] = res.body.tee();
    slot.stop();
    const done = new Response(copy).arrayBuffer().then((bytes) => {
      const usage = plan.meter?.plain(new Uint8Array(bytes), plan.tags, sent);
      limiter.settle(leaseId, { ...success, release: true, streaming: false, usage });
    });
    ${wait ? "await done;" : "plan.waitUntil(done);"}
    return stampTier(s.stamp(new Response(out, answerInit(res))), served(undefined));
  }
`;

export function patchesOf(variant: string): Patch[] {
  if (variant === "probe") return [];
  if (variant === "native")
    return [{ file: SETTLE, find: READ_WHOLE_AT, put: (f) => `  if (!streaming) { slot.stop(); return stampTier(s.stamp(new Response(res.body, answerInit(res))), served(undefined)); }\n${f}` }];
  if (variant === "tee") return [{ file: SETTLE, find: READ_WHOLE_AT, put: (f) => tee(false) + f }];
  if (variant === "read-then-tee") return [{ file: SETTLE, find: READ_WHOLE_AT, put: (f) => tee(true) + f }];
  if (variant === "array-buffer")
    return [{ file: SETTLE, find: "read = await readUpTo(body, BUFFER_MAX, (r) => timer.idle(r));", put: () => "read = { whole: new Uint8Array(await res.arrayBuffer()) } as { whole: Uint8Array };" }];
  const stage = /^after:(\w+)$/.exec(variant)?.[1];
  if (stage)
    return [
      { file: "src/routes/proxy.ts", find: "const serve = pipeline([", put: (f) => SHORT + f },
      { file: "src/routes/proxy.ts", find: `\n  ${stage}, //`, put: (f) => `${f.slice(0, -4)}, short as never, //` },
    ];
  throw new Error(`no variant ${variant}: probe, after:<stage>, native, tee, read-then-tee, array-buffer`);
}

/** Writes `variant`'s changes over the tree at `root`; throws where an anchor is missing or not alone. */
export function applyVariant(root: string, variant: string): void {
  for (const p of patchesOf(variant)) {
    const file = join(root, p.file);
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(p.find);
    if (at < 0 || text.indexOf(p.find, at + 1) >= 0) throw new Error(`variant ${variant}: ${p.file} has ${at < 0 ? "no" : "more than one"} ${JSON.stringify(p.find)}`);
    writeFileSync(file, text.slice(0, at) + p.put(p.find) + text.slice(at + p.find.length));
  }
}

/** The probe of this tree as it is now, with `variant`'s changes. */
export function variantTree(variant: string): Tree {
  const t = probe(here());
  try {
    applyVariant(t.root, variant);
  } catch (err) {
    t.remove();
    throw err;
  }
  return { ...t, name: variant };
}
