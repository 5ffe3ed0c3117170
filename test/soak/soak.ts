// A soak through `wrangler dev`: random 429s, 5xx, 524s, slow streams and callers that leave.
// At the end every request must be accounted for, nothing may be in flight, and the gateway's
// memory must not have grown without bound. `npm run soak [-- --count N] [--baseline]` by hand
// (20,000 requests unless told); CI runs a small count through test/e2e/soak.test.ts. `--baseline`
// runs the same load through a plain pass-through Worker afterwards: wrangler dev's own memory
// grows with traffic too.
import { resolve } from "node:path";
import { type Gateway, startGateway } from "../support/gateway.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";
import { parseExposition } from "../support/exposition.ts";

export interface SoakOptions {
  count: number;
  concurrency: number;
  seed: number;
  /** Also run the same load through a plain pass-through Worker, to tell the gateway's memory from wrangler dev's. */
  baseline?: boolean;
  log?: (line: string) => void;
}

export interface SoakReport {
  sent: number;
  answered: Record<string, number>;
  aborted: number;
  unaccounted: number;
  internalErrors: number;
  inFlightAtEnd: number;
  queuedAtEnd: number;
  /**
   * Slots returned by expiry (slotgate_leases_expired_total): a lease its Worker never released.
   * LEASE_TTL_MS is short here, so a leak would otherwise be gone before the end is read.
   */
  leasesExpired: number;
  rssStartMb: number;
  rssEndMb: number;
  /** workerd's resident memory as the requests complete: [requests done, MB], twenty points. */
  rssCurve: [number, number][];
  /** The same load through bench/passthrough (a Worker that only fetches), when asked for. */
  baselineRssStartMb?: number;
  baselineRssEndMb?: number;
  baselineRssCurve?: [number, number][];
  /** Wall time of the gateway's run (and of the plain Worker's, when asked for). */
  seconds: number;
  baselineSeconds?: number;
  upstream: { attempts: number; rateLimited: number; faults: Record<string, number> };
}

const ADMIN = "soak-admin-token";

/** A small deterministic PRNG so a failing soak can be replayed with its seed. */
function prng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1_664_525 + 1_013_904_223) >>> 0) / 2 ** 32);
}

async function one(gw: Gateway, i: number, rnd: () => number): Promise<string> {
  const stream = rnd() < 0.3;
  const leave = rnd() < 0.05 ? rnd() * 400 : null; // 5% of callers leave, some mid-stream
  const ctrl = new AbortController();
  const timer = leave === null ? null : setTimeout(() => ctrl.abort(), leave);
  const credential = `sk-soak-${i % 3}`; // three tenants
  try {
    const res = await fetch(`${gw.url}/openai/v1/chat/completions`, {
      method: "POST",
      signal: ctrl.signal,
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", "x-slotgate-deadline-ms": "20000" },
      body: JSON.stringify({ model: "gpt-4o-mini", stream, max_tokens: 32, messages: [{ role: "user", content: `soak ${i}` }] }),
    });
    await res.arrayBuffer();
    if (res.status === 200) return "200";
    const type = res.headers.get("x-slotgate-error");
    if (type === "internal_error") return "internal";
    if (type && !res.headers.has("retry-after") && (type === "queue_timeout" || type === "limiter_unavailable")) return "unaccounted";
    return type ? `${res.status} ${type}` : `${res.status} upstream`;
  } catch {
    return ctrl.signal.aborted ? "aborted" : "unaccounted";
  } finally {
    if (timer) clearTimeout(timer);
  }
}

async function leasesExpired(gw: Gateway): Promise<number> {
  const res = await fetch(`${gw.url}/admin/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
  // One sample per key: the soak may have made several keys' limiters.
  return parseExposition(await res.text()).flatMap((f) => f.samples).filter((x) => x.name === "slotgate_leases_expired_total").reduce((a, x) => a + x.value, 0);
}

async function limiterTotals(gw: Gateway): Promise<{ inFlight: number; queued: number }> {
  const res = await fetch(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const { keys } = (await res.json()) as { keys: { inFlight: number; queued: number }[] };
  return keys.reduce((t, k) => ({ inFlight: t.inFlight + k.inFlight, queued: t.queued + k.queued }), { inFlight: 0, queued: 0 });
}

interface Run {
  answered: Record<string, number>;
  /** RSS after a tenth of the load (after warm-up), and at every twentieth of it. */
  rssStart: number;
  curve: [number, number][];
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const secondsSince = (t: number) => Math.round((Date.now() - t) / 100) / 10;

/** Sends `count` requests, `concurrency` at a time, counting outcomes and sampling workerd's memory. */
async function drive(gw: Gateway, opts: SoakOptions, label: string): Promise<Run> {
  const rnd = prng(opts.seed);
  const run: Run = { answered: {}, rssStart: 0, curve: [[0, mb(gw.rss())]] };
  const step = Math.max(1, Math.floor(opts.count / 20));
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let i = next++; i < opts.count; i = next++) {
      const outcome = await one(gw, i, rnd);
      run.answered[outcome] = (run.answered[outcome] ?? 0) + 1;
      done++;
      if (done === Math.floor(opts.count / 10)) run.rssStart = gw.rss();
      if (done % step === 0) {
        run.curve.push([done, mb(gw.rss())]);
        opts.log?.(`${label} ${done}/${opts.count} ${JSON.stringify(run.answered)} rss ${mb(gw.rss())} MB`);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  return run;
}

/** The same load through a plain pass-through Worker: how much wrangler dev's own memory grows. */
async function baselineRun(opts: SoakOptions, upstream: string): Promise<Run & { rssEnd: number; seconds: number }> {
  const gw = await startGateway({ root: resolve(import.meta.dirname, "../../bench/passthrough"), vars: { UPSTREAM: upstream } });
  try {
    const started = Date.now();
    const run = await drive(gw, opts, "plain");
    return { ...run, rssEnd: gw.rss(), seconds: secondsSince(started) };
  } finally {
    await gw.close();
  }
}

export async function soak(opts: SoakOptions): Promise<SoakReport> {
  let standin: Standin | undefined;
  let gw: Gateway | undefined;
  try {
    standin = await startStandin({
      // A small burst so the RPM bucket runs dry early and 429s come from the limit itself.
      rpm: 3_000, tpm: 0, burst: 0.05, latencyMs: 20, jitterMs: 40, streamChunks: 6, seed: opts.seed,
      faults: { "524": 0.04, "529": 0.04, "503": 0.03, "500": 0.02 },
    });
    gw = await startGateway({
      providers: { openai: { baseUrl: standin.url } },
      vars: { ADMIN_TOKEN: ADMIN, BASE_BACKOFF_MS: "50", MAX_BACKOFF_MS: "500", LEASE_TTL_MS: "5000" },
    });
    const started = Date.now();
    const run = await drive(gw, opts, "gateway");
    // Leases of callers that left mid-stream are released by the Worker; give it a moment.
    let totals = await limiterTotals(gw);
    for (let i = 0; i < 50 && (totals.inFlight > 0 || totals.queued > 0); i++) {
      await new Promise((r) => setTimeout(r, 200));
      totals = await limiterTotals(gw);
    }
    const expired = await leasesExpired(gw);
    const { aborted = 0, unaccounted = 0, internal = 0, ...rest } = run.answered;
    const st = standin.stats();
    const rssEnd = gw.rss();
    const seconds = secondsSince(started);
    let baseline: Awaited<ReturnType<typeof baselineRun>> | undefined;
    if (opts.baseline) {
      await gw.close();
      standin.configure({ faults: {} });
      baseline = await baselineRun(opts, standin.url);
    }
    return {
      sent: opts.count,
      answered: rest,
      aborted,
      unaccounted,
      internalErrors: internal,
      inFlightAtEnd: totals.inFlight,
      queuedAtEnd: totals.queued,
      leasesExpired: expired,
      rssStartMb: mb(run.rssStart),
      rssEndMb: mb(rssEnd),
      rssCurve: run.curve,
      ...(baseline ? { baselineRssStartMb: mb(baseline.rssStart), baselineRssEndMb: mb(baseline.rssEnd), baselineRssCurve: baseline.curve, baselineSeconds: baseline.seconds } : {}),
      seconds,
      upstream: { attempts: st.attempts, rateLimited: st.rateLimited, faults: st.faults },
    };
  } finally {
    await gw?.close();
    await standin?.close();
  }
}

if (import.meta.main) {
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const baseline = process.argv.includes("--baseline");
  const report = await soak({ count: arg("count", 20_000), concurrency: arg("concurrency", 32), seed: arg("seed", 1), baseline, log: console.log });
  // One [requests done, MB] pair a line is too long for twenty points: keep each pair on one line.
  console.log(JSON.stringify(report, null, 2).replace(/\[\s+(\d+),\s+(\d+)\s+\]/g, "[$1, $2]"));
  const ok = report.unaccounted === 0 && report.internalErrors === 0 && report.inFlightAtEnd === 0 && report.queuedAtEnd === 0 && report.leasesExpired === 0;
  console.log(ok ? "soak: every request accounted for, nothing in flight" : "soak: FAILED");
  process.exit(ok ? 0 : 1);
}
