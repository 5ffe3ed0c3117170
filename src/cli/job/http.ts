// The batch APIs' calls (uploads, creates, looks, downloads): small, few, and each one matters, so
// each is tried again while its answer is transient (the network, a 5xx, a 429, the gateway's own
// "come back later"), and its last answer is the caller's to read.
import { decideRetry } from "../../policy/backoff";
import { parseRetryAfter } from "../../policy/headers";
import { sleep } from "../../sleep";
import type { SendContext } from "../exchange";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body as JSON, or null when it is not. */
  json: unknown;
}

/** The API could not be reached after every try (or the run was aborted). */
export class Unreachable extends Error {}

/** Errors of the gateway's own that mean "nothing was sent; come back later". */
const COME_BACK = new Set(["queue_timeout", "limiter_unavailable", "key_store_unavailable", "overloaded"]);

export interface CallInit {
  headers: Record<string, string>;
  body?: string | FormData;
  /** A 429 is the caller's to read (a create refused for queue room), not tried again here. */
  keep429?: boolean;
  /**
   * Not idempotent (a create): a call whose answer was lost may have made something, so it is not
   * sent again here; a network failure throws Unreachable and a 5xx comes back, and the caller
   * looks for what it may have made before it tries again. (The gateway's own refusals sent
   * nothing upstream, and are still waited out and sent again.)
   */
  once?: boolean;
}

/** One call, tried again on transient answers; the last answer comes back whatever its status. */
export async function call(ctx: SendContext, method: string, url: string, init: CallInit): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    let res: Response | null = null;
    let text = "";
    try {
      const signal = AbortSignal.any([ctx.abort, AbortSignal.timeout(ctx.requestTimeoutMs)]);
      res = await ctx.fetch(url, { method, headers: init.headers, body: init.body, signal });
      text = await res.text();
    } catch {
      if (ctx.abort.aborted) throw new Unreachable(`${method} ${url}: aborted`);
      res = null;
    }
    const gatewaySays = res?.headers.get("x-slotgate-error") ?? "";
    if (res === null && init.once) throw new Unreachable(`${method} ${url}: no answer (it may have been made; looked for before it is sent again)`);
    const transient = res === null || (res.status >= 500 && !init.once) || (res.status === 429 && !init.keep429) || res.status === 408;
    if (res && !transient && !COME_BACK.has(gatewaySays)) return reply(res, text);
    const hint = res ? parseRetryAfter(res.headers.get("retry-after") ?? "", ctx.now()) : null;
    if (COME_BACK.has(gatewaySays)) {
      await sleep((hint ?? 1_000) * (1 + 0.1 * ctx.random()), ctx.abort);
      if (ctx.abort.aborted) throw new Unreachable(`${method} ${url}: aborted`);
      continue;
    }
    const d = decideRetry({
      cls: res?.status === 429 ? "rate_limit" : "transient", attempt, hintMs: hint, maxAttempts: ctx.gateway.maxAttempts,
      now: ctx.now(), deadline: Number.POSITIVE_INFINITY, baseMs: ctx.gateway.baseBackoffMs, maxMs: ctx.gateway.maxBackoffMs, random: ctx.random,
    });
    if (!d.retry) {
      if (res) return reply(res, text);
      throw new Unreachable(`${method} ${url}: could not be reached (${attempt} attempts)`);
    }
    ctx.counters.retries += 1;
    await sleep(d.delayMs, ctx.abort);
    if (ctx.abort.aborted) throw new Unreachable(`${method} ${url}: aborted`);
  }
}

function reply(res: Response, text: string): Reply {
  let json: unknown = null;
  try {
    json = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON (a results file): the text is what the caller reads
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The error an API answered with, as one line. */
export function errorText(r: Reply): { code: string; message: string } {
  const e = (r.json as { error?: { code?: unknown; type?: unknown; message?: unknown; error?: { type?: unknown; message?: unknown } } } | null)?.error;
  const inner = e?.error ?? e;
  const code = [e?.code, inner?.type].find((v) => typeof v === "string" && v !== "") as string | undefined;
  const message = typeof inner?.message === "string" ? inner.message : r.text.slice(0, 300);
  return { code: code ?? `http_${r.status}`, message };
}
