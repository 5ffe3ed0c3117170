// The matrix the limiter policy is judged by: provider shapes x run lengths x caller fleets, each
// sized so the provider's limit allows it in about the run's length.
import type { Fleet } from "./clients.ts";
import type { Shape } from "./provider.ts";
import type { Scenario } from "./scenario.ts";

const MINUTE = 60_000;
const C = 16;
const SMALL = { maxTokens: 16, promptChars: 400 };
const BIG = { maxTokens: 4_000, promptChars: 4_000 };

/** Requests a quota allows in `runMs`: its starting content plus its refill, less one answer. */
function quotaN(perMinute: number, unit: number, runMs: number, latencyMs: number, startFull: boolean, burst: number): number {
  const start = startFull ? Math.floor(perMinute * burst) : 0;
  return Math.max(8, Math.round((start + (perMinute * (runMs - latencyMs)) / MINUTE) / unit));
}

const fleet = (k: number, n: number, size = SMALL): Fleet => ({ k, c: C, n, ...size });
const secs = (ms: number) => (ms >= 60_000 ? `${ms / 60_000}min` : `${ms / 1000}s`);

function rpm(name: string, rate: number, o: { burst: number; full: boolean; latencyMs: number; k: number; runMs: number; flavour?: "openai" | "anthropic"; extra?: Partial<Shape> }): Scenario {
  const shape: Shape = { flavour: o.flavour ?? "openai", rpm: rate, burst: o.burst, drained: !o.full, latencyMs: o.latencyMs, jitterMs: o.latencyMs / 5, ...o.extra };
  const n = quotaN(rate, 1, o.runMs, o.latencyMs, o.full, o.burst);
  return { name: `${name} ${secs(o.runMs)} k${o.k}`, family: "quota", shape, fleet: fleet(o.k, n) };
}

function tpm(name: string, rate: number, o: { burst: number; full: boolean; latencyMs: number; k: number; runMs: number; flavour: "openai" | "anthropic" }): Scenario {
  const unit = Math.ceil(BIG.promptChars / 4) + BIG.maxTokens;
  const shape: Shape = { flavour: o.flavour, tpm: rate, burst: o.burst, drained: !o.full, latencyMs: o.latencyMs, jitterMs: o.latencyMs / 5 };
  return { name: `${name} ${secs(o.runMs)} k${o.k}`, family: "quota", shape, fleet: fleet(o.k, quotaN(rate, unit, o.runMs, o.latencyMs, o.full, o.burst), BIG) };
}

function cap(name: string, n: number, o: { headers: boolean; latencyMs: number; k: number; runMs: number; retryAfter?: Shape["retryAfter"] }): Scenario {
  const shape: Shape = { flavour: "openai", maxConcurrent: n, headers: o.headers, rpm: o.headers ? 100_000 : 0, latencyMs: o.latencyMs, jitterMs: o.latencyMs / 5, retryAfter: o.retryAfter ?? "exact" };
  return { name: `${name} ${secs(o.runMs)} k${o.k}`, family: "cap", shape, fleet: fleet(o.k, Math.round((n * o.runMs) / (o.latencyMs * 1.1))) };
}

function faults(name: string, o: { latencyMs: number; k: number; runMs: number }): Scenario {
  const shape: Shape = { flavour: "openai", rpm: 1_000_000, latencyMs: o.latencyMs, jitterMs: o.latencyMs / 5, faults: { "524": 0.1, "529": 0.05, "503": 0.05 } };
  return { name: `${name} ${secs(o.runMs)} k${o.k}`, family: "faults", shape, fleet: fleet(o.k, Math.round((o.k * C * o.runMs) / (o.latencyMs * 1.1 + 40))) };
}

function change(name: string, base: Shape, set: Partial<Shape>, n: number, k: number, atMs: number): Scenario {
  return { name, family: "change", shape: { ...base, changes: [{ atMs, set }] }, fleet: fleet(k, n) };
}

export function matrix(): Scenario[] {
  const out: Scenario[] = [];
  for (const runMs of [10_000, 120_000]) {
    for (const k of [1, 4, 16]) {
      out.push(rpm("rpm600 minute drained 300ms", 600, { burst: 1, full: false, latencyMs: 300, k, runMs }));
      out.push(rpm("rpm600 second full 300ms", 600, { burst: 1 / 60, full: true, latencyMs: 300, k, runMs }));
    }
    out.push(rpm("rpm600 minute full 300ms", 600, { burst: 1, full: true, latencyMs: 300, k: 4, runMs }));
    out.push(rpm("rpm600 second drained 300ms", 600, { burst: 1 / 60, full: false, latencyMs: 300, k: 4, runMs }));
    out.push(rpm("rpm600 minute drained 3s", 600, { burst: 1, full: false, latencyMs: 3_000, k: 8, runMs }));
    out.push(rpm("rpm3000 second drained 1s", 3_000, { burst: 1 / 60, full: false, latencyMs: 1_000, k: 16, runMs }));
    out.push(rpm("rpm600 anthropic drained 300ms", 600, { burst: 1, full: false, latencyMs: 300, k: 4, runMs, flavour: "anthropic" }));
    out.push(rpm("rpm600 drained retry-after absent", 600, { burst: 1, full: false, latencyMs: 300, k: 4, runMs, extra: { retryAfter: "absent" } }));
    out.push({ ...rpm("rpm600 drained retry-after long", 600, { burst: 1, full: false, latencyMs: 300, k: 4, runMs, extra: { retryAfter: "long" } }), family: "hint" });
    out.push(tpm("tpm openai minute drained 1s", 1_200_000, { burst: 1, full: false, latencyMs: 1_000, k: 4, runMs, flavour: "openai" }));
    out.push(tpm("tpm anthropic minute full 1s", 1_200_000, { burst: 1, full: true, latencyMs: 1_000, k: 4, runMs, flavour: "anthropic" }));
    out.push(tpm("tpm openai second drained 1s", 1_200_000, { burst: 1 / 60, full: false, latencyMs: 1_000, k: 4, runMs, flavour: "openai" }));
    for (const k of [1, 4, 16]) out.push(cap("cap12 headers 300ms", 12, { headers: true, latencyMs: 300, k, runMs }));
    out.push(cap("cap12 no headers 300ms", 12, { headers: false, latencyMs: 300, k: 4, runMs }));
    out.push(cap("cap12 no headers 500ms", 12, { headers: false, latencyMs: 500, k: 16, runMs }));
    out.push(cap("cap12 headers 3s", 12, { headers: true, latencyMs: 3_000, k: 4, runMs }));
    out.push(cap("cap12 headers retry-after absent", 12, { headers: true, latencyMs: 300, k: 4, runMs, retryAfter: "absent" }));
    out.push(faults("faults 20% 500ms", { latencyMs: 500, k: 4, runMs }));
    out.push(faults("faults 20% 100ms", { latencyMs: 100, k: 4, runMs }));
  }
  // promptfoo's own scheduler keeps 4 in flight per process by default; 4 processes on a 300 RPM key.
  for (const runMs of [10_000, 120_000]) {
    const pf = rpm("rpm300 promptfoo-like 4x4 1s", 300, { burst: 1, full: false, latencyMs: 1_000, k: 4, runMs });
    out.push({ ...pf, fleet: { ...pf.fleet, c: 4 } });
  }
  out.push(rpm("rpm600 minute drained 20s", 600, { burst: 1, full: false, latencyMs: 20_000, k: 16, runMs: 120_000 }));
  out.push(rpm("rpm60 minute drained 100ms", 60, { burst: 1, full: false, latencyMs: 100, k: 4, runMs: 120_000 }));
  const base: Shape = { flavour: "openai", rpm: 1_200, burst: 1, drained: true, latencyMs: 300, jitterMs: 60 };
  out.push(change("rpm1200 halved at 20s", base, { rpm: 600 }, 500, 4, 20_000));
  out.push(change("rpm600 doubled at 20s", { ...base, rpm: 600 }, { rpm: 1_200 }, 600, 4, 20_000));
  const capped: Shape = { flavour: "openai", maxConcurrent: 12, rpm: 100_000, latencyMs: 300, jitterMs: 60 };
  out.push(change("cap12 halved at 5s", capped, { maxConcurrent: 6 }, 500, 4, 5_000));
  out.push(change("cap12 doubled at 5s", capped, { maxConcurrent: 24 }, 1_000, 4, 5_000));
  return out;
}
