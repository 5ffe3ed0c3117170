// promptfoo's client behaviour (0.123, read from its dist: fetchWithRetries in fetch-*.js, the
// adaptive scheduler in shared-*.js), one instance per `promptfoo eval` process, on the virtual clock.
//  - fetchWithRetries (4 retries): a 429, or a 200 whose x-ratelimit-remaining-requests or -tokens
//    (or X-RateLimit-Remaining) is "0", counts as rate-limited: the answer is thrown away and the
//    request sent again after the reset headers' wait (else retry-after-ms / retry-after, else 60 s)
//    plus up to 1 s of jitter. Past its retries the call fails with "Rate limited".
//  - The scheduler around each provider call (one per process and key): a slot queue of
//    --max-concurrency that holds every call while the last answer said remaining 0 and its reset
//    is ahead; adaptive concurrency that cuts when remaining/limit < 10% (x 0.2-0.6), halves on a
//    rate-limited result and grows x1.5 after 5 clean successes; and 3 retries of a rate-limited
//    result, waiting 1 s x 2^n (+20%) and marking the queue blocked for 60 s when there is no hint.
import type { Clock } from "./clock.ts";
import type { SimRequest } from "./gateway.ts";

type Send = (r: SimRequest) => Promise<Response>;

const FETCH_RETRIES = 4;
const SCHEDULER_RETRIES = 3;
const JITTER_MS = 1_000;
const NO_HINT_MS = 60_000;
/** The status a failed promptfoo call resolves with: an error in its results, never sent by anyone. */
export const FAILED = 599;

const first = (h: Headers, names: string[]) => {
  for (const n of names) {
    const v = Number.parseInt(h.get(n) ?? "", 10);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  return undefined;
};

/** promptfoo's parseDuration: "1s", "20ms", "6m0s", "1.5s". */
function duration(v: string): number | null {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  const unit: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let seen = "";
  for (const m of v.matchAll(re)) {
    total += Number(m[1]) * unit[m[2]!]!;
    seen += m[0];
  }
  return seen.length > 0 && seen === v.trim() ? total : null;
}

interface Parsed {
  remainingRequests?: number;
  remainingTokens?: number;
  limitRequests?: number;
  limitTokens?: number;
  resetAt?: number;
  retryAfterMs?: number;
}

/** Its parseRateLimitHeaders, for the headers the stand-in and the gateway send. */
function parse(h: Headers, now: number): Parsed {
  const out: Parsed = {
    remainingRequests: first(h, ["x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining", "x-ratelimit-remaining", "ratelimit-remaining"]),
    remainingTokens: first(h, ["x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining"]),
    limitRequests: first(h, ["x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit", "x-ratelimit-limit", "ratelimit-limit"]),
    limitTokens: first(h, ["x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit"]),
  };
  for (const name of ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset", "x-ratelimit-reset", "ratelimit-reset"]) {
    const v = h.get(name);
    if (v === null) continue;
    const d = duration(v);
    const at = d !== null ? now + d : /^\d+(\.\d+)?$/.test(v.trim()) ? now + Number(v) * 1_000 : Date.parse(v);
    if (Number.isFinite(at)) {
      out.resetAt = at;
      break;
    }
  }
  const ms = Number.parseInt(h.get("retry-after-ms") ?? "", 10);
  const secs = h.get("retry-after");
  if (Number.isFinite(ms) && ms >= 0) out.retryAfterMs = ms;
  else if (secs !== null && /^\d+$/.test(secs.trim())) out.retryAfterMs = Number(secs) * 1_000;
  if (out.retryAfterMs !== undefined) out.resetAt ??= now + out.retryAfterMs;
  return out;
}

const rateLimited = (res: Response) =>
  res.status === 429 || ["X-RateLimit-Remaining", "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens"].some((n) => res.headers.get(n) === "0");

/** What one process's promptfoo counts: answers it threw away and re-sent, calls that failed. */
export interface PromptfooLog {
  resent: number;
  failed: number;
}

/**
 * Wraps the transport of one promptfoo process (gateway or provider) in promptfoo's retry and
 * scheduling behaviour. A call that ends in an error resolves with status FAILED.
 */
export function promptfooProcess(clock: Clock, send: Send, random: () => number, maxConcurrency: number, log: PromptfooLog): Send {
  let limit = maxConcurrency;
  let active = 0;
  let successes = 0;
  let remainingRequests: number | null = null;
  let remainingTokens: number | null = null;
  let requestLimit: number | null = null;
  let tokenLimit: number | null = null;
  let resetAt: number | null = null;
  let timer: number | null = null;
  const waiting: (() => void)[] = [];

  const exhausted = () => {
    if (resetAt !== null && clock.now >= resetAt) {
      remainingRequests = remainingTokens = resetAt = null;
      return false;
    }
    return resetAt !== null && ((remainingRequests !== null && remainingRequests <= 0) || (remainingTokens !== null && remainingTokens <= 0));
  };
  const scheduleReset = () => {
    if (timer !== null) clock.cancel(timer);
    timer = null;
    if (resetAt !== null && waiting.length > 0)
      timer = clock.at(resetAt, () => {
        timer = null;
        remainingRequests = remainingTokens = resetAt = null;
        pump();
      });
  };
  const pump = () => {
    while (waiting.length > 0 && active < limit && !exhausted()) {
      active++;
      waiting.shift()!();
    }
    if (waiting.length > 0 && exhausted()) scheduleReset();
  };
  const acquire = () => new Promise<void>((r) => (waiting.push(r), pump()));
  const release = () => {
    active = Math.max(0, active - 1);
    pump();
  };
  const setLimit = (n: number) => {
    limit = Math.max(1, n);
    pump();
  };
  const markRateLimited = (retryAfterMs: number | undefined) => {
    remainingRequests = remainingTokens = 0;
    if (retryAfterMs !== undefined) resetAt = Math.max(resetAt ?? 0, clock.now + retryAfterMs);
    else resetAt ??= clock.now + NO_HINT_MS;
    scheduleReset();
  };
  const onRateLimit = (retryAfterMs: number | undefined) => {
    markRateLimited(retryAfterMs);
    successes = 0;
    setLimit(Math.floor(limit * 0.5));
  };
  const learn = (h: Headers) => {
    const p = parse(h, clock.now);
    if (p.remainingRequests !== undefined) remainingRequests = p.remainingRequests;
    if (p.limitRequests !== undefined) requestLimit = p.limitRequests;
    if (p.remainingTokens !== undefined) remainingTokens = p.remainingTokens;
    if (p.limitTokens !== undefined) tokenLimit = p.limitTokens;
    if (p.resetAt !== undefined) {
      resetAt = p.resetAt;
      scheduleReset();
    }
    const ratio = Math.min(
      remainingRequests !== null && requestLimit ? remainingRequests / requestLimit : 1,
      remainingTokens !== null && tokenLimit ? remainingTokens / tokenLimit : 1,
    );
    if (ratio < 0.1 && limit > 1) setLimit(Math.floor(limit * (0.2 + (Math.max(0, ratio) / 0.1) * 0.4)));
  };

  /** fetchWithRetries: null when its retries ran out (the provider call then returns an error). */
  const fetchWithRetries = async (req: SimRequest): Promise<Response | null> => {
    for (let i = 0; i <= FETCH_RETRIES; i++) {
      const res = await send(req);
      if (!rateLimited(res)) return res;
      await res.arrayBuffer();
      if (i >= FETCH_RETRIES) return null;
      if (res.status !== 429) log.resent++;
      const p = parse(res.headers, clock.now);
      const hasReset = res.headers.has("x-ratelimit-reset-requests") || res.headers.has("x-ratelimit-reset-tokens");
      const wait = hasReset && p.resetAt !== undefined ? Math.max(0, p.resetAt - clock.now) : (p.retryAfterMs ?? NO_HINT_MS);
      await clock.sleep(wait + Math.floor(random() * JITTER_MS));
    }
    return null;
  };

  return async (req) => {
    for (let attempt = 0; ; attempt++) {
      await acquire();
      const res = await fetchWithRetries(req);
      if (res) learn(res.headers);
      release();
      const limited = res === null || res.status === 429;
      if (!limited) {
        if (++successes >= 5 && limit < maxConcurrency) {
          successes = 0;
          setLimit(Math.min(maxConcurrency, Math.ceil(limit * 1.5)));
        }
        return res!;
      }
      const hint = res ? parse(res.headers, clock.now).retryAfterMs : undefined;
      onRateLimit(hint);
      if (attempt >= SCHEDULER_RETRIES) {
        log.failed++;
        return res ?? new Response("promptfoo: rate limited", { status: FAILED });
      }
      const base = hint ?? 1_000 * 2 ** (attempt + 1);
      await clock.sleep(Math.min(base + base * 0.2 * random(), 60_000));
    }
  };
}
