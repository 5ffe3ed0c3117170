// The real-client matrix (issue 17): every shape the issue measured, as data. Each runs through
// wrangler dev with the real client against the stand-in, and in the simulator with the same
// provider, fleet and client model. Buckets refill as real providers' do: a 1 s bucket (a sixtieth
// of the per-minute limit), starting full, on a credential of its own per run.
import type { StandinOptions } from "../../test/support/standin/index.ts";

/** aisdk: the Vercel AI SDK (`ai` with `@ai-sdk/openai`, its default model: the Responses API). */
export type Client = "openai" | "anthropic" | "promptfoo" | "aisdk";

/** What the shape is held to (issue 17's targets, the cap's and the faults' as issue 29 tightened them). */
export type Family = "quota" | "cap" | "faults" | "promptfoo";

export interface RealShape {
  /** Scenario name: `npm run bench -- --only real-tokens`. */
  name: string;
  label: string;
  client: Client;
  /** Processes, requests (tests) per process, in flight per process. */
  k: number;
  m: number;
  c: number;
  maxTokens: number;
  family: Family;
  /** Stand-in options beyond the neutral defaults (bench/context.ts configure). */
  standin: Partial<StandinOptions>;
  /** Option changes at a time after "go" (a limit moved mid-run). */
  changes?: { atMs: number; set: Partial<StandinOptions> }[];
  /** Every n-th request of a client is streamed and read to its end (SDK clients). */
  streamEvery?: number;
  /** Also run the same clients straight at the stand-in with their own retries (SDKs: maxRetries 2), as the baseline. */
  direct?: boolean;
}

/** A 1 s bucket: the share of a per-minute limit a real provider lets through in one second. */
export const SECOND = 1 / 60;

export const SHAPES: RealShape[] = [
  {
    name: "real-tokens",
    label: "Anthropic SDK, 400k TPM as a 1 s bucket (6,667 tokens), max_tokens 4000, 32 callers",
    client: "anthropic", k: 4, m: 16, c: 8, maxTokens: 4_000, family: "quota",
    standin: { tpm: 400_000, burst: { tokens: 6_667 }, retryAfter: "ms", latencyMs: 400 },
  },
  {
    name: "real-promptfoo",
    label: "promptfoo CLI, 4 x 30 tests at --max-concurrency 16, 300 RPM, 300 ms",
    client: "promptfoo", k: 4, m: 30, c: 16, maxTokens: 16, family: "promptfoo", direct: true,
    standin: { rpm: 300, burst: SECOND, latencyMs: 300 },
  },
  {
    name: "real-rpm",
    label: "openai SDK, 8 x 30 at 16, 1,200 RPM as a 1 s bucket, 300 ms",
    client: "openai", k: 8, m: 30, c: 16, maxTokens: 16, family: "quota",
    standin: { rpm: 1_200, burst: SECOND, latencyMs: 300 },
  },
  {
    name: "real-aisdk",
    label: "Vercel AI SDK (openai(model): Responses), generateText and streamText in turn, 8 x 30 at 16, 1,200 RPM as a 1 s bucket, 300 ms",
    client: "aisdk", k: 8, m: 30, c: 16, maxTokens: 16, family: "quota", streamEvery: 2,
    standin: { rpm: 1_200, burst: SECOND, latencyMs: 300 },
  },
  {
    name: "real-long",
    label: "openai SDK, 3 s answers at 600 RPM (~30 in flight), 4 x 40 at 16",
    client: "openai", k: 4, m: 40, c: 16, maxTokens: 16, family: "quota",
    standin: { rpm: 600, burst: SECOND, latencyMs: 3_000 },
  },
  {
    name: "real-cap",
    label: "openai SDK, concurrency cap 12 (429 with retry-after: 1, quota headers with room), 4 x 40 at 16, 300 ms",
    client: "openai", k: 4, m: 40, c: 16, maxTokens: 16, family: "cap",
    standin: { maxConcurrent: 12, rpm: 100_000, tpm: 100_000_000, latencyMs: 300 },
  },
  {
    name: "real-faults",
    label: "openai SDK, 10% 524 + 5% 529 + 5% 503, 500 ms, 4 x 60 at 16",
    client: "openai", k: 4, m: 60, c: 16, maxTokens: 16, family: "faults", direct: true,
    standin: { rpm: 1_000_000, tpm: 100_000_000, latencyMs: 500, faults: { "524": 0.1, "529": 0.05, "503": 0.05 } },
  },
  {
    name: "real-change",
    label: "openai SDK, 1,800 -> 600 (at 4 s) -> 1,800 RPM (at 10 s), 1 s bucket, 8 x 40 at 16, 300 ms",
    client: "openai", k: 8, m: 40, c: 16, maxTokens: 16, family: "quota",
    standin: { rpm: 1_800, burst: SECOND, latencyMs: 300 },
    changes: [{ atMs: 4_000, set: { rpm: 600 } }, { atMs: 10_000, set: { rpm: 1_800 } }],
  },
];

/** --quick: the same shapes, a few requests each, so the harness is exercised in seconds, not judged. */
export function quick(s: RealShape): RealShape {
  const scale = (n: number) => Math.max(2, Math.ceil(n / 4));
  return { ...s, k: Math.min(s.k, 2), m: scale(s.m), changes: s.changes?.map((c) => ({ ...c, atMs: c.atMs / 4 })) };
}

export interface Targets {
  /** Makespan over ideal (quota, cap, promptfoo) or over the direct SDK's makespan (faults). */
  makespan: number;
  /** Upstream 429s as a share of attempts. */
  share429: number;
}

export function targets(f: Family): Targets {
  const makespan = { quota: 1.1, cap: 1.15, faults: 1.0, promptfoo: 1.15 }[f];
  return { makespan, share429: 0.02 };
}

/** The simulator disagrees with a measured row when makespans differ by more than this, or 429 shares by more than SIM_POINTS. */
export const SIM_MAKESPAN = 0.1;
export const SIM_POINTS = 0.02;
