// A measured run's first seconds, request by request, to set beside sim/timeline.ts: what the
// clients sent and when their answers came (with x-slotgate-queue-ms: the wait for a grant), what
// reached the stand-in (its own log: arrival, outcome, the remaining it reported) and the
// limiter's changes of limit. `npm run bench -- --only real-rpm --timeline` writes
// bench/timeline-<shape>-<via>.json; `node bench/real/timeline.ts <file> [--until 2000]` prints it.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { LimiterSnapshot } from "../../src/limiter/types.ts";
import type { Attempt } from "../../test/support/standin/index.ts";
import type { Fleet } from "../fleet.ts";

export interface Timeline {
  shape: string;
  via: "gateway" | "direct";
  /** "go", epoch ms: every time below is ms after it. */
  go: number;
  requests: { sent: number; queueMs: number | null; answered: number; status: number }[];
  upstream: { at: number; outcome: string; status: number; remaining: number | null }[];
  history: LimiterSnapshot["history"];
  /** The limiter's grants as its event lines date them (LOG_LEVEL debug; the first 50 or so, then 5 a second). */
  grants: { at: number; inFlight: number; limit: number; queued: number }[];
}

/** The key's `slot:granted` lines in wrangler's output, ms after `go`. */
function grantsIn(output: string, key: string | null, go: number): Timeline["grants"] {
  const out: Timeline["grants"] = [];
  for (const line of output.split("\n")) {
    const at = line.indexOf('{"event":"slot:granted"');
    if (at < 0) continue;
    try {
      const e = JSON.parse(line.slice(at)) as { at: string; key: string; inFlight: number; limit: number; queued: number };
      if (e.key === key) out.push({ at: Date.parse(e.at) - go, inFlight: e.inFlight, limit: e.limit, queued: e.queued });
    } catch {}
  }
  return out;
}

export function timelineOf(shape: string, via: "gateway" | "direct", fleet: Fleet, log: Attempt[], credential: string, state: LimiterSnapshot | null, output: string): Timeline {
  const go = fleet.start;
  const requests = fleet.sentAt.map((sent, i) => ({
    sent: sent - go, queueMs: Number.isFinite(fleet.queueMs[i]) ? fleet.queueMs[i]! : null, answered: Math.round(sent + fleet.latency[i]! - go), status: fleet.status[i]!,
  }));
  const upstream = log.filter((a) => a.credential === credential).map((a) => ({ at: a.at - go, outcome: a.outcome, status: a.status, remaining: a.remaining ?? null }));
  return { shape, via, go, requests: requests.sort((a, b) => a.sent - b.sent), upstream, history: state?.history ?? [], grants: grantsIn(output, fleet.key, go) };
}

export function writeTimeline(t: Timeline): string {
  const file = resolve(import.meta.dirname, "..", `timeline-${t.shape}-${t.via}.json`);
  writeFileSync(file, `${JSON.stringify(t)}\n`);
  return file;
}

/** The first `untilMs`, in 50 ms steps: requests sent, granted (the limiter's lines), arrived upstream (and how), answered. */
export function timelineTable(t: Timeline, untilMs: number, stepMs = 50): string {
  const head = "| ms | sent | granted (in flight / limit after the last) | upstream: ok / 429 / fault | remaining reported (last) | answered | limit changes |";
  const out = [head, "| --- | --- | --- | --- | --- | --- | --- |"];
  const inStep = (x: number, from: number) => x >= from && x < from + stepMs;
  for (let from = 0; from < untilMs; from += stepMs) {
    const up = t.upstream.filter((a) => inStep(a.at, from));
    const last = up.at(-1)?.remaining;
    const changes = t.history.filter((h) => inStep(Date.parse(h.at) - t.go, from)).map((h) => `${h.from}->${h.to} ${h.reason}`);
    const grants = t.grants.filter((g) => inStep(g.at, from));
    const row = [
      from, t.requests.filter((r) => inStep(r.sent, from)).length,
      grants.length ? `${grants.length} (${grants.at(-1)!.inFlight} / ${grants.at(-1)!.limit})` : "",
      `${up.filter((a) => a.outcome === "success").length} / ${up.filter((a) => a.outcome === "rate_limited").length} / ${up.filter((a) => a.outcome === "fault").length}`,
      last ?? "", t.requests.filter((r) => inStep(r.answered, from)).length, changes.join(", "),
    ];
    out.push(`| ${row.join(" | ")} |`);
  }
  return out.join("\n");
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) throw new Error("usage: node bench/real/timeline.ts bench/timeline-<shape>-<via>.json [--until 2000]");
  const at = process.argv.indexOf("--until");
  const t = JSON.parse(readFileSync(file, "utf8")) as Timeline;
  console.log(timelineTable(t, at > 0 ? Number(process.argv[at + 1]) : 2_000));
}
