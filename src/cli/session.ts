// One run of `slotgate batch`, whatever its mode: the checked options, the credentials, the output
// file and its tally, and the synchronous path (the limiter, or the gateway, and a bounded pool of
// requests) that sync mode sends every line down and provider mode sends its fallback lines down.
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { checkBounds, DEFAULT_GATEWAY, DEFAULT_LIMITER, type LimiterConfig } from "../config/limits";
import { ConfigError } from "../config/error";
import type { Tier } from "../providers/dialect";
import { LABEL } from "../providers/key";
import { readsFree } from "../limiter/cache-share";
import { DEFAULT_LINE_PROVIDER } from "../providers/lines";
import { priceTable } from "../usage/prices";
import { runDirect } from "./direct";
import type { Counters, SendContext } from "./exchange";
import { runGateway } from "./gateway";
import { type Item, scan, UsageError } from "./input";
import { LocalLimiters } from "./local-limiter";
import { isFinal, outputLine, OutputWriter, prepareOutput } from "./output";
import { authHeaders, dialectOfLine, isProvider, route } from "./providers";
import { SpendTally } from "./spend";
import type { BatchOptions, OutputLine } from "./types";

const never = new AbortController().signal;

/** How the lines ended, for the summary. */
export interface Tally {
  succeeded: number;
  failed: number;
  retryable: number;
  interrupted: number;
  byReason: Record<string, number>;
}

export interface Session {
  o: BatchOptions;
  startedAt: number;
  /** custom_id (or line-<n>) and provider of every non-blank input line. */
  entries: { id: string; provider: string | null }[];
  /** custom_ids the output already answers (--resume). */
  done: Set<string>;
  /** The variables the credentials came from, one per provider of the lines to send. */
  credentialVars: string[];
  ctx: SendContext;
  spend: SpendTally;
  tally: Tally;
  /** Items in the synchronous pool now (in flight or waiting for a slot). */
  pool: { open: number };
  /** Where a provider's API is: the gateway's route for it, else its base URL (or --base-url). */
  baseOf(provider: string): string;
  /** The credential (and, through a gateway, the token and who is asking) for a call to `provider`. */
  headersOf(provider: string, url: string): Record<string, string>;
  /** Writes one output line and counts it; `batch`: answered by a provider batch (priced as such). */
  record(line: OutputLine | null, item?: Pick<Item, "provider" | "model">, batch?: boolean): void;
  /** Sends items down the synchronous path, at most --concurrency at once, recording each line. */
  sync(items: AsyncIterable<Item | OutputLine> | Iterable<Item | OutputLine>): Promise<void>;
  close(): void;
}

/**
 * Checks the options, the input and the credentials and readies the output. Throws UsageError
 * (exit 2) before anything is sent when the input has duplicate custom_ids, a credential is
 * missing, or the output holds results and resume is off.
 */
export async function openSession(o: BatchOptions): Promise<Session> {
  const now = o.now ?? Date.now;
  const startedAt = now();
  const provider = o.provider ?? DEFAULT_LINE_PROVIDER;
  const concurrency = o.concurrency ?? 16;
  const env = o.env ?? process.env;
  if (!isProvider(provider)) throw new UsageError(`unknown provider ${JSON.stringify(provider)}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError("--concurrency must be a positive integer");
  if (!existsSync(o.input)) throw new UsageError(`${o.input}: no such file`);
  const gatewayBase = o.gateway ? checkUrl(o.gateway, "--gateway") : null;
  const baseUrl = o.baseUrl ? checkUrl(o.baseUrl, "--base-url") : undefined;
  const tier = syncTier(o.mode);
  const who = { ...whoHeaders(o), ...(tier && { "x-slotgate-tier": tier }) };
  let prices;
  try {
    prices = priceTable(env.PRICES);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const { entries } = await scan(o.input, provider);
  const { done } = await prepareOutput(o.out, (o.resume ?? false) || (o.cancel ?? false));
  const keys = new Map<string, string>();
  for (const p of new Set(entries.filter((e) => !done.has(e.id)).map((e) => e.provider).filter((p) => p !== null))) {
    const key = env[route(p).credentialVar];
    if (!key) throw new UsageError(`${route(p).credentialVar} is not set (needed for the ${p} lines); credentials come from the environment only`);
    keys.set(p, key);
  }
  const baseOf = (p: string) => (gatewayBase ? `${gatewayBase}/${p}` : route(p, baseUrl).baseUrl);
  const headersOf = (p: string, url: string) => ({
    ...authHeaders(p, url, keys.get(p) ?? ""),
    ...(gatewayBase && env.SLOTGATE_TOKEN ? { "x-slotgate-token": env.SLOTGATE_TOKEN } : {}),
    ...(gatewayBase ? who : {}),
  });
  const counters: Counters = { inFlight: 0, absorbed429: 0, retries: 0 };
  const ctx: SendContext = {
    fetch: o.fetch ?? fetch, now, random: o.random ?? Math.random,
    gateway: { ...DEFAULT_GATEWAY, ...o.retry },
    requestTimeoutMs: o.requestTimeoutMs ?? 600_000,
    stop: o.stop ?? never, abort: o.abort ?? never, counters,
    url: (it) => `${baseOf(it.provider)}${it.url}`,
    headers: (it) => headersOf(it.provider, it.url),
    ...(tier && { tier }),
    served: new Map(),
    outlooks: new Map(),
  };
  const limiters = new LocalLimiters(directLimits({ ...DEFAULT_LIMITER }, concurrency, o.limiter), now);
  const drive = (it: Item) => (gatewayBase ? runGateway(ctx, it) : runDirect(ctx, limiters.for(`${it.provider}:${it.model}`, readsFree(dialectOfLine(it), it.model)), it));
  const spend = new SpendTally(prices, tier);
  const tally: Tally = { succeeded: 0, failed: 0, retryable: 0, interrupted: 0, byReason: {} };
  const writer = new OutputWriter(o.out);

  const record = (line: OutputLine | null, item?: Pick<Item, "provider" | "model">, batch = false) => {
    if (line === null) return;
    writer.write(line);
    const served = ctx.served.get(line.custom_id);
    ctx.served.delete(line.custom_id);
    if (line.error === null) {
      tally.succeeded += 1;
      if (item) spend.add(item.provider, item.model, line.response?.body, batch, served?.tier, served?.why);
    } else if (line.error.code === "interrupted") tally.interrupted += 1;
    else {
      tally.failed += 1;
      tally.byReason[line.error.code] = (tally.byReason[line.error.code] ?? 0) + 1;
      if (!isFinal(line)) tally.retryable += 1;
    }
  };

  const pool = { open: 0 };
  const sync = async (items: AsyncIterable<Item | OutputLine> | Iterable<Item | OutputLine>) => {
    const active = new Set<Promise<void>>();
    const stopped = new Promise<void>((r) => (ctx.stop.aborted ? r() : ctx.stop.addEventListener("abort", () => r(), { once: true })));
    for await (const it of items) {
      if (ctx.stop.aborted) break;
      // A line that cannot be sent is its own (error) answer.
      if ("custom_id" in it) {
        record(it);
        continue;
      }
      while (active.size >= concurrency && !ctx.stop.aborted) await Promise.race([...active, stopped]);
      if (ctx.stop.aborted) break;
      const task: Promise<void> = drive(it)
        .catch((err: unknown) => outputLine(it.customId, null, { code: "internal_error", message: String((err as Error)?.stack ?? err) }))
        .then((line) => record(line, it))
        .finally(() => {
          active.delete(task);
          pool.open -= 1;
        });
      active.add(task);
      pool.open += 1;
    }
    await Promise.all(active);
  };

  return {
    o, startedAt, entries, done, ctx, spend, tally, pool, baseOf, headersOf, record, sync,
    credentialVars: [...keys.keys()].map((p) => route(p).credentialVar),
    close: () => {
      limiters.close();
      writer.close();
    },
  };
}

/** The tier a run's synchronous lines go at: flex in `--mode flex` (and `auto` with a deadline within a day: batch.ts), where their provider sells it; else none asked. */
export const syncTier = (mode: BatchOptions["mode"]): Tier | undefined => (mode === "flex" ? "flex" : undefined);

/** The gateway's limiter defaults, kept within what --concurrency lets be open at once. */
function directLimits(base: LimiterConfig, concurrency: number, override: Partial<LimiterConfig> = {}): LimiterConfig {
  const c = {
    ...base,
    maxConcurrency: Math.min(base.maxConcurrency, concurrency),
    startConcurrency: Math.min(base.startConcurrency, concurrency),
    minConcurrency: Math.min(base.minConcurrency, concurrency),
    ...override,
  };
  const bad = checkBounds(c);
  if (bad) throw new UsageError(`limiter settings: ${bad}`);
  return c;
}

/** The job's own caller label and lane at the gateway: low by default, so interactive calls on the key go first. */
function whoHeaders(o: BatchOptions): Record<string, string> {
  const caller = o.caller ?? defaultCaller(o.input);
  if (!LABEL.test(caller)) throw new UsageError("--caller must be 1-128 of A-Z a-z 0-9 . _ @ + / -");
  const priority = o.priority ?? "low";
  if (!["high", "normal", "low"].includes(priority)) throw new UsageError("--priority must be high, normal or low");
  return { "x-slotgate-caller": caller, "x-slotgate-priority": priority };
}

/** `batch.<input file name>`, in the label's characters: the admin view names the job. */
export function defaultCaller(input: string): string {
  return `batch.${basename(input).replace(/[^A-Za-z0-9._@+/-]/g, "-")}`.slice(0, 128);
}

function checkUrl(raw: string, flag: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return raw.replace(/\/+$/, "");
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, got ${JSON.stringify(raw)}`);
  }
}
