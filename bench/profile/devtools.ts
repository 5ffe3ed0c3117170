// A Chrome DevTools protocol client for the Worker's isolate under `wrangler dev --inspector-port`:
// what bench/scenarios/profile.ts drives V8's CPU profiler with. Miniflare's inspector proxy takes
// a websocket only from an allowed `Origin` (localhost is one), so this sends one.
import type { CpuProfile } from "./summary.ts";

export interface Devtools {
  send<T = unknown>(method: string, params?: object): Promise<T>;
  /** The bundle's URL as the isolate knows it (`file:///.../.wrangler/tmp/dev-*\/index.js`), once a script was parsed. */
  scripts(): { scriptId: string; url: string }[];
  close(): void;
}

/** Connects to the first (the only) Worker the inspector proxy on `port` lists. */
export async function devtools(port: number): Promise<Devtools> {
  const list = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  if (!list[0]) throw new Error(`no Worker behind the inspector on port ${port}`);
  const ws = new WebSocket(list[0].webSocketDebuggerUrl, { headers: { origin: "http://127.0.0.1" } });
  await new Promise<void>((ok, fail) => {
    ws.addEventListener("open", () => ok(), { once: true });
    ws.addEventListener("error", () => fail(new Error(`the inspector on port ${port} refused the websocket`)), { once: true });
  });
  let last = 0;
  const waiting = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  const parsed: { scriptId: string; url: string }[] = [];
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; method?: string; result?: unknown; error?: { message: string }; params?: { scriptId: string; url: string } };
    if (m.method === "Debugger.scriptParsed" && m.params) parsed.push({ scriptId: m.params.scriptId, url: m.params.url });
    // workerd answers some requests (Profiler.enable, .start) by sending them back, without a result.
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.fail(new Error(m.error.message));
    else w.ok(m.result);
  });
  ws.addEventListener("close", () => {
    for (const w of waiting.values()) w.fail(new Error("the inspector closed"));
    waiting.clear();
  });
  return {
    send: <T>(method: string, params: object = {}) =>
      new Promise<T>((ok, fail) => {
        const id = ++last;
        waiting.set(id, { ok: ok as (v: unknown) => void, fail });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    scripts: () => parsed,
    close: () => ws.close(),
  };
}

/** Runs `during` with V8's sampling profiler on, every `intervalUs` µs; its profile. */
export async function profiled(d: Devtools, intervalUs: number, during: () => Promise<void>): Promise<CpuProfile> {
  await d.send("Profiler.enable");
  await d.send("Profiler.setSamplingInterval", { interval: intervalUs });
  await d.send("Profiler.start");
  try {
    await during();
  } catch (err) {
    await d.send("Profiler.stop").catch(() => {});
    throw err;
  }
  const { profile } = await d.send<{ profile: CpuProfile }>("Profiler.stop");
  await d.send("Profiler.disable");
  return profile;
}

/** The Worker's bundle as the isolate runs it (its URL a file on disk, with its source map beside it). */
export async function bundleUrl(d: Devtools): Promise<string | null> {
  const find = () => d.scripts().find((s) => /\/\.wrangler\/tmp\/[^/]+\/index\.js$/.test(s.url))?.url ?? null;
  await d.send("Debugger.enable");
  // The scripts already parsed are told after the answer, one event each.
  for (let waited = 0; !find() && waited < 5_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  await d.send("Debugger.disable");
  return find();
}
