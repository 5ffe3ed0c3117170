// The pipeline every API request goes through, whatever the provider:
// credential -> body -> provider checks -> quota -> concurrency -> buckets -> fault roll -> latency -> answer.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { anthropic } from "./anthropic.ts";
import { azure, azurePath } from "./azure.ts";
import type { Dialect, ErrorReply, StreamPlan } from "./dialect.ts";
import { encodeSse } from "./dialect.ts";
import { cloudflare524 } from "./faults.ts";
import type { Dice } from "./faults.ts";
import { Account } from "./limits.ts";
import type { LimitKind } from "./limits.ts";
import { openai } from "./openai.ts";
import { forCredential } from "./options.ts";
import type { StandinOptions } from "./options.ts";
import { makeReply } from "./reply.ts";
import { parseRequest } from "./request.ts";
import type { Outcome, StatsRecorder } from "./stats.ts";
import type { BatchBook } from "./batch-run.ts";
import type { StoredFile } from "./files.ts";

export interface State {
  options: StandinOptions;
  accounts: Map<string, Account>;
  stats: StatsRecorder;
  dice: Dice;
  /** Wakes each request held (options.hold); called when hold is turned off. */
  held: Set<() => void>;
  /** Each account's files (/v1/files), by credential. */
  files: Map<string, Map<string, StoredFile>>;
  /** Every account's batches (/v1/batches, /v1/messages/batches). */
  book: BatchBook;
}

type Headers = Record<string, string>;

export interface Target {
  dialect: Dialect;
  endpoint: string;
  /** Azure: the deployment in the path, which is the model. */
  deployment?: string;
}

/** The provider and endpoint of a path: suffix match, so /v1/... and /openai/v1/... both work. */
export function route(path: string): Target | null {
  const az = azurePath(path);
  if (az) return { dialect: azure, ...az };
  const p = path.replace(/\/+$/, "");
  for (const dialect of [anthropic, openai]) {
    for (const endpoint of Object.keys(dialect.endpoints)) if (p.endsWith(endpoint)) return { dialect, endpoint };
  }
  return null;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = {}): void {
  if (res.destroyed) return; // the caller has gone
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Resolves after `ms`, or at once when the caller has gone. */
function sleep(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0 || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on("close", done);
  });
}

/** Resolves when hold is turned off, or at once when the caller has gone. */
async function hold(state: State, res: ServerResponse): Promise<void> {
  if (res.destroyed) return;
  state.stats.holding(1);
  await new Promise<void>((resolve) => {
    const done = () => {
      state.held.delete(done);
      res.off("close", done);
      resolve();
    };
    state.held.add(done);
    res.on("close", done);
  });
  state.stats.holding(-1);
}

/** retry-after header(s) for a wait of `waitMs`, in the configured mode. */
export function retryAfter(o: StandinOptions, waitMs: number, now = Date.now()): Headers {
  if (o.retryAfter === "absent") return {};
  if (o.retryAfter === "long") return { "retry-after": String(o.longRetryAfterSec) };
  if (!Number.isFinite(waitMs)) return {}; // waiting will never help
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  if (o.retryAfter === "date") {
    return { "retry-after": new Date(Math.ceil((now + seconds * 1000) / 1000) * 1000).toUTCString() };
  }
  if (o.retryAfter === "ms") return { "retry-after": String(seconds), "retry-after-ms": String(Math.ceil(waitMs)) };
  return { "retry-after": String(seconds) };
}

/** Writes `head` after one share of the latency, each delta after another, then `tail`. */
async function writeStream(res: ServerResponse, plan: StreamPlan, totalMs: number, headers: Headers): Promise<void> {
  const gap = totalMs / (plan.deltas.length + 1);
  await sleep(gap, res);
  if (res.destroyed) return;
  res.writeHead(200, { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.write(plan.head.map(encodeSse).join(""));
  for (const delta of plan.deltas) {
    await sleep(gap, res);
    if (res.destroyed) return;
    res.write(encodeSse(delta));
  }
  res.end(plan.tail.map(encodeSse).join(""));
}

/** Which header carried the credential, and any other credential sent beside it, for tests of how a gateway sent them. */
export function credentialHeaders(h: IncomingHttpHeaders, credential: string | undefined): { credentialHeader: string | null; extraCredentials: string[] } {
  const bearer = /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() ?? h.authorization;
  const sent = [bearer, h["api-key"], h["x-api-key"], h["x-goog-api-key"]].filter((v): v is string => typeof v === "string" && v !== "");
  const extraCredentials = [...new Set(sent.filter((v) => v !== credential))];
  if (credential === undefined) return { credentialHeader: null, extraCredentials };
  const header = ["api-key", "x-api-key"].find((name) => h[name] === credential) ?? "authorization";
  return { credentialHeader: header, extraCredentials };
}

const HOSTS: Record<Dialect["name"], string> = { openai: "api.openai.com", anthropic: "api.anthropic.com", azure: "myresource.openai.azure.com" };

export async function handleApi(
  state: State, res: ServerResponse, h: IncomingHttpHeaders, path: string, raw: string, target: Target, query = "",
): Promise<void> {
  const { dialect, endpoint } = target;
  const credential = dialect.credential(h);
  // A credential's own limits (keyLimits) over the global ones; everything else is global.
  const o = credential === undefined ? state.options : forCredential(state.options, credential);
  const parsed = parseRequest(raw);
  const req = typeof parsed === "string" ? null : target.deployment === undefined ? parsed : { ...parsed, model: target.deployment };
  const model = req?.model ?? "";
  const at = Date.now();
  const record = (status: number, outcome: Outcome, limitedBy?: LimitKind | "concurrency") =>
    state.stats.record(
      {
        at, credential: credential ?? null, ...credentialHeaders(h, credential), provider: dialect.name, path, query,
        model, stream: req?.stream ?? false, status, outcome,
        // The first window's remaining as this answer reports it (requests before tokens), for timelines.
        remaining: account?.snapshot(o, performance.now())[0]?.remaining ?? null,
      },
      o.logLimit, limitedBy,
    );
  let account: Account | null = null;
  const ids = dialect.requestId();
  const headers = (): Headers => ({
    ...ids,
    ...dialect.identity(o.organization),
    ...(o.headers && account ? dialect.limitHeaders(account.snapshot(o, performance.now())) : {}),
  });
  const refuse = (err: ErrorReply, outcome: Outcome, extra: Headers = {}, limitedBy?: LimitKind | "concurrency") => {
    record(err.status, outcome, limitedBy);
    sendJson(res, err.status, dialect.stamp(err.body, ids), { ...headers(), ...extra });
  };

  if (!credential || (o.apiKeys && !o.apiKeys.includes(credential))) return refuse(dialect.unauthorized(credential), "unauthorized");
  if (!req) return refuse(dialect.invalid(parsed as string), "invalid");
  const bad = dialect.check(h, req, endpoint, new URLSearchParams(query));
  if (bad) return refuse(bad, "invalid");
  if (o.models && !o.models.includes(model)) return refuse(dialect.unknownModel(model), "invalid");
  if (o.quotaExhaustedKeys.includes(credential)) return refuse(dialect.quotaExhausted(), "quota");
  account = state.accounts.get(credential) ?? new Account();
  state.accounts.set(credential, account);
  if (o.maxConcurrent > 0 && account.inFlight >= o.maxConcurrent) {
    return refuse(dialect.tooManyConcurrent(model, o.organization), "rate_limited", retryAfter(o, 1000), "concurrency");
  }
  const cost = { input: req.promptTokens, output: endpoint === "/embeddings" ? 0 : (req.maxTokens ?? o.outputTokens) };
  const admission = account.admit(o, cost, performance.now());
  if (!admission.ok) {
    const err = dialect.rateLimited(admission, model, o.organization, endpoint);
    return refuse(err, "rate_limited", retryAfter(o, admission.waitMs), admission.kind);
  }

  const fault = state.dice.fault(o.faults);
  const okHeaders = headers(); // limits as they stand at admission, like the real providers
  const totalMs = o.latencyMs + state.dice.jitter(o.jitterMs);
  record(fault ? Number(fault) : 200, fault ? "fault" : "success");
  account.inFlight++;
  state.stats.begin();
  try {
    if (o.hold) await hold(state, res);
    if (res.destroyed) return; // left while held: nothing was served
    if (fault === "524") {
      await sleep(totalMs, res);
      if (res.destroyed) return;
      const page = cloudflare524(HOSTS[dialect.name]);
      res.writeHead(524, "A Timeout Occurred", { ...page.headers, "content-length": Buffer.byteLength(page.body) });
      res.end(page.body);
    } else if (fault) {
      if (fault === "500") await sleep(totalMs, res);
      const err = dialect.fault(Number(fault) as 500 | 503 | 529);
      sendJson(res, err.status, dialect.stamp(err.body, ids), okHeaders);
    } else {
      const reply = makeReply(req, o);
      const result = dialect.endpoints[endpoint]!(req, reply);
      // An OpenAI chat stream reports usage only when asked (stream_options.include_usage).
      if (!(endpoint === "/chat/completions" && req.stream && !req.includeUsage))
        state.stats.used(reply.inputTokens, endpoint === "/embeddings" ? 0 : reply.outputTokens);
      if ("stream" in result) await writeStream(res, result.stream, totalMs, okHeaders);
      else {
        await sleep(totalMs, res);
        sendJson(res, 200, result.json, okHeaders);
      }
    }
  } finally {
    account.inFlight--;
    state.stats.end(res.destroyed && !res.writableFinished);
  }
}
