// The request path's stages as issue 40 names them, each a rule over the functions a profile charges
// (bench/profile/summary.ts, `charged`): which stage a function's time belongs to. The rules read
// b2ddb70's file and function names; a rewrite that renames them moves time into "the rest".
export const STAGES: readonly [stage: string, rule: RegExp][] = [
  ["the upstream fetch itself", /^fetch \(src\/routes\/proxy\.ts|^fetch \(index\.ts|^send \(src\/proxy\/steps/],
  ["the request body read and held", /^readBody|proxy\/held\.ts|^concat /],
  ["header copies and writes", /^upstreamHeaders|^callerHeaders|proxy\/hop\.ts|^answerInit|^stamp|^mark |quota-headers|proxy\/pacing\.ts/],
  ["the answer read whole through a JavaScript stream", /attempt-timer\.ts:(4[6-9]|5\d)|^readUpTo|^isBlank|^replay /],
  ["timers", /internal_timers|^AttemptTimer|^stop \(src\/proxy\/attempt-timer|^answered \(src\/proxy\/attempt-timer/],
  ["the credential's SHA-256 and the key", /providers\/key\.ts/],
  ["JSON, usage and price", /^parseJson|usage\/|policy\/estimate|tiers\//],
  ["the rate-limit headers read", /policy\/limits|policy\/headers/],
  ["URL and route work", /proxy\/asked\.ts|providers\/url|pools\/admit|pools\/member|providers\/endpoints/],
  ["stats gathered and sent", /cache\/stage\.ts:129|cache\/tally|gathered\.ts|directory\/|cache\/object|__mf_do_wrapper|observe\/upstream/],
  ["the limiter client and channel", /limiter-client|proxy\/channel|proxy\/tickets|proxy\/session/],
  ["the limiter object (same isolate)", /src\/limiter\/|observe\/log|observe\/events/],
  ["Hono and wrangler's dev middleware", /node_modules\/hono|wrangler\/templates|middleware-loader|bundle-/],
  ["the retry loop and stage glue", /src\//],
];

export const REST = "the rest (workerd's own JavaScript, native at the top)";

/** µs by stage, largest first, from a charged tally; V8's own entries (root, program, idle, gc) left out. */
export function byStage(charged: Map<string, number>): [string, number][] {
  const out = new Map<string, number>();
  for (const [fn, us] of charged) {
    if (/^\((root|program|idle|garbage collector)\)$/.test(fn)) continue;
    const stage = STAGES.find(([, rule]) => rule.test(fn))?.[0] ?? REST;
    out.set(stage, (out.get(stage) ?? 0) + us);
  }
  return [...out].sort((a, b) => b[1] - a[1]);
}
