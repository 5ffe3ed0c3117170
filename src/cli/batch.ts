import { existsSync } from "node:fs";
import { basename } from "node:path";
import { checkBounds, type LimiterConfig } from "../config/limits";
import { DEFAULT_GATEWAY, DEFAULT_LIMITER } from "../config/limits";
import { runDirect } from "./direct";
import type { Counters, SendContext } from "./exchange";
import { runGateway } from "./gateway";
import { type Item, parseLine, readLines, scan, UsageError } from "./input";
import { LocalLimiters } from "./local-limiter";
import { isFinal, outputLine, OutputWriter, prepareOutput } from "./output";
import { startReporter, type ProgressState } from "./progress";
import { LABEL } from "../providers/key";
import { authHeaders, isProvider, route } from "./providers";
import type { BatchOptions, BatchSummary, OutputLine } from "./types";
import { SpendTally } from "./spend";
import { priceTable } from "../usage/prices";
import { ConfigError } from "../config/error";

export type { BatchOptions, BatchSummary } from "./types";

const never = new AbortController().signal;

/**
 * Pushes a JSONL file of OpenAI-batch lines through the limiter, appending one output line per
 * item as it finishes. Throws UsageError (exit 2) before anything is sent when the input has
 * duplicate custom_ids, a credential is missing, or the output holds results and resume is off.
 */
export async function runBatch(o: BatchOptions): Promise<BatchSummary> {
  const now = o.now ?? Date.now;
  const startedAt = now();
  const provider = o.provider ?? "openai";
  const concurrency = o.concurrency ?? 16;
  const env = o.env ?? process.env;
  if (!isProvider(provider)) throw new UsageError(`unknown provider ${JSON.stringify(provider)}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError("--concurrency must be a positive integer");
  if (!existsSync(o.input)) throw new UsageError(`${o.input}: no such file`);
  const gatewayBase = o.gateway ? checkUrl(o.gateway, "--gateway") : null;
  const baseUrl = o.baseUrl ? checkUrl(o.baseUrl, "--base-url") : undefined;
  const who = whoHeaders(o);

  let prices;
  try {
    prices = priceTable(env.PRICES);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const spend = new SpendTally(prices);
  const { entries } = await scan(o.input, provider);
  const { done } = await prepareOutput(o.out, o.resume ?? false);
  const pending = entries.filter((e) => !done.has(e.id));
  const keys = new Map<string, string>();
  for (const p of new Set(pending.map((e) => e.provider).filter((p) => p !== null))) {
    const key = env[route(p).credentialVar];
    if (!key) throw new UsageError(`${route(p).credentialVar} is not set (needed for the ${p} lines); credentials come from the environment only`);
    keys.set(p, key);
  }

  const limiterConfig = directLimits({ ...DEFAULT_LIMITER }, concurrency, o.limiter);
  const counters: Counters = { inFlight: 0, absorbed429: 0, retries: 0 };
  const ctx: SendContext = {
    fetch: o.fetch ?? fetch,
    now,
    random: o.random ?? Math.random,
    gateway: { ...DEFAULT_GATEWAY, ...o.retry },
    requestTimeoutMs: o.requestTimeoutMs ?? 600_000,
    stop: o.stop ?? never,
    abort: o.abort ?? never,
    counters,
    url: (it) => (gatewayBase ? `${gatewayBase}/${it.provider}${it.url}` : `${route(it.provider, baseUrl).baseUrl}${it.url}`),
    headers: (it) => ({
      ...authHeaders(it.provider, it.url, keys.get(it.provider) ?? ""),
      ...(gatewayBase && env.SLOTGATE_TOKEN ? { "x-slotgate-token": env.SLOTGATE_TOKEN } : {}),
      ...(gatewayBase ? who : {}),
    }),
  };
  const limiters = new LocalLimiters(limiterConfig, now);
  const drive = (it: Item) => (gatewayBase ? runGateway(ctx, it) : runDirect(ctx, limiters.for(`${it.provider}:${it.model}`), it));

  const s = { succeeded: 0, failed: 0, retryable: 0, interrupted: 0, byReason: {} as Record<string, number> };
  const writer = new OutputWriter(o.out);
  const record = (line: OutputLine | null, item?: Item) => {
    if (line === null) return;
    writer.write(line);
    if (line.error === null) {
      s.succeeded += 1;
      if (item) spend.add(item.provider, item.model, line.response?.body);
    } else if (line.error.code === "interrupted") s.interrupted += 1;
    else {
      s.failed += 1;
      s.byReason[line.error.code] = (s.byReason[line.error.code] ?? 0) + 1;
      if (!isFinal(line)) s.retryable += 1;
    }
  };
  const active = new Set<Promise<void>>();
  const state = (): ProgressState => ({
    total: pending.length, succeeded: s.succeeded, failed: s.failed, inFlight: counters.inFlight,
    waiting: active.size - counters.inFlight, absorbed429: counters.absorbed429, startedAt,
  });
  const reporter = o.progress ? startReporter(state, o.progress) : null;
  const stopped = new Promise<void>((r) => (ctx.stop.aborted ? r() : ctx.stop.addEventListener("abort", () => r(), { once: true })));

  try {
    for await (const { line, text } of readLines(o.input)) {
      if (ctx.stop.aborted) break;
      if (text.trim() === "") continue;
      const parsed = parseLine(text, line, provider);
      const id = parsed.ok ? parsed.item.customId : parsed.bad.customId;
      if (done.has(id)) continue;
      if (!parsed.ok) {
        record(outputLine(id, null, { code: "invalid_line", message: parsed.bad.message }));
        continue;
      }
      while (active.size >= concurrency && !ctx.stop.aborted) await Promise.race([...active, stopped]);
      if (ctx.stop.aborted) break;
      const task: Promise<void> = drive(parsed.item)
        .catch((err: unknown) => outputLine(id, null, { code: "internal_error", message: String((err as Error)?.stack ?? err) }))
        .then((line) => record(line, parsed.item))
        .finally(() => active.delete(task));
      active.add(task);
    }
    await Promise.all(active);
  } finally {
    limiters.close();
    reporter?.stop();
    writer.close();
  }

  const answered = s.succeeded + s.failed + s.interrupted;
  return {
    out: o.out, lines: entries.length, skipped: entries.length - pending.length,
    succeeded: s.succeeded, failed: s.failed, failedByReason: s.byReason, retryable: s.retryable,
    notDone: pending.length - answered + s.interrupted,
    absorbed429: counters.absorbed429, retries: counters.retries, wallMs: now() - startedAt, stopped: ctx.stop.aborted,
    spend: spend.s,
  };
}

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
