// The pipeline every API request goes through, whatever the provider:
// credential -> body -> provider checks -> quota -> concurrency -> buckets -> fault roll -> latency -> answer.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { ErrorReply, RetryHeaders } from "./dialect.ts";
import { cloudflare524 } from "./faults.ts";
import type { Dice } from "./faults.ts";
import { Account, countedApart } from "./limits.ts";
import type { LimitKind } from "./limits.ts";
import { forCredential } from "./options.ts";
import type { FaultStatus, StandinOptions } from "./options.ts";
import { makeReply } from "./reply.ts";
import { cachePrefix } from "./prompt-cache.ts";
import { parseRequest } from "./request.ts";
import { accountKey } from "./route.ts";
import type { Target } from "./route.ts";
import type { Outcome, StatsRecorder } from "./stats.ts";
import { askedTier, charge, reportTier, shedReply, tierAccount, unsupportedTier } from "./tiers.ts";
import { holdOpen, sleep, writeStream } from "./write.ts";
import type { BatchBook } from "./batch-run.ts";
import type { StoredFile } from "./files.ts";
import type { GoogleIssuer } from "./google-oauth.ts";

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
  /** Google's token endpoint: its service accounts and the access tokens it issued (Vertex's credentials). */
  google: GoogleIssuer;
}

type Headers = Record<string, string>;

export { route } from "./route.ts";
export type { Target } from "./route.ts";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = {}): void {
  if (res.destroyed) return; // the caller has gone
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
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

/**
 * retry-after header(s) for a wait of `waitMs`, in the configured mode, as the dialect sends them:
 * Azure always adds retry-after-ms, Gemini sends none (its 429 says it in the body).
 */
export function retryAfter(o: StandinOptions, waitMs: number, now = Date.now(), style: RetryHeaders = "seconds"): Headers {
  if (o.retryAfter === "absent" || style === "none") return {};
  if (style === "seconds+ms" && o.retryAfter === "exact") return retryAfter({ ...o, retryAfter: "ms" }, waitMs, now);
  if (o.retryAfter === "long") return { "retry-after": String(o.longRetryAfterSec) };
  if (!Number.isFinite(waitMs)) return {}; // waiting will never help
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  if (o.retryAfter === "date") {
    return { "retry-after": new Date(Math.ceil((now + seconds * 1000) / 1000) * 1000).toUTCString() };
  }
  if (o.retryAfter === "ms") return { "retry-after": String(seconds), "retry-after-ms": String(Math.ceil(waitMs)) };
  return { "retry-after": String(seconds) };
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

/** Faults drawn for this request: Groq's 498 only for a flex-tier request (the draw is made either way, so the sequence holds). */
function faultsFor(faults: StandinOptions["faults"], serviceTier: string | null): Partial<Record<FaultStatus, number>> {
  if (serviceTier === "flex" || !faults["498"]) return faults;
  const { "498": _flex, ...rest } = faults;
  return rest;
}

export async function handleApi(
  state: State, res: ServerResponse, h: IncomingHttpHeaders, path: string, raw: string, target: Target, query = "",
): Promise<void> {
  const { dialect, endpoint } = target;
  const search = new URLSearchParams(query);
  const credential = dialect.credential(h, search);
  // Who the request counts against: the credential, or the account its path names (Vertex's project: its tokens rotate).
  const owner = target.account ?? credential;
  // An owner's own limits (keyLimits) over the global ones; everything else is global.
  let o = owner === undefined ? state.options : forCredential(state.options, owner);
  const parsed = parseRequest(raw, dialect.imageTokens);
  // The path's model (Azure's deployment, Gemini's models/<model>) and stream flag over the body's.
  const req = typeof parsed === "string" ? null : { ...parsed, model: target.model ?? parsed.model, stream: target.stream ?? parsed.stream };
  const model = req?.model ?? "";
  const at = Date.now();
  const record = (status: number, outcome: Outcome, limitedBy?: LimitKind | "concurrency") =>
    state.stats.record(
      {
        at, credential: owner ?? null, ...credentialHeaders(h, credential), provider: dialect.name, path, query,
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

  if (!credential || !owner || (o.apiKeys && !o.apiKeys.includes(credential))) return refuse(dialect.unauthorized(credential), "unauthorized");
  const denied = dialect.google && state.google.check(credential, owner, dialect.google.resource, dialect.google.method);
  if (denied) return refuse(denied, "unauthorized");
  if (!req) return refuse(dialect.invalid(parsed as string), "invalid");
  const bad = dialect.check(h, req, endpoint, search, path);
  if (bad) return refuse(bad, "invalid");
  if (o.models && !o.models.includes(model)) return refuse(dialect.unknownModel(model), "invalid");
  if (o.quotaExhaustedKeys.includes(owner)) return refuse(dialect.quotaExhausted(model), "quota");
  // Service tiers (tiers.ts): flex refused for a model without it, shed before any limit counts it, and counted where the tier counts.
  const tier = askedTier(dialect, endpoint, req);
  if (tier === "unsupported") return refuse(unsupportedTier(dialect), "invalid");
  if (tier === "flex" && state.dice.shed(o.flexShed)) return refuse(shedReply(dialect), "shed");
  // A token count draws from an account of its own: requests only, at its own rate.
  const counting = dialect.counts?.endpoint === endpoint ? dialect.counts : null;
  const counted = counting
    ? { key: `${accountKey(target, owner, model)}\u0000count`, o: { ...o, rpm: o.rpm * counting.rpmTimes, tpm: 0, itpm: null, otpm: null } }
    : tierAccount(dialect, accountKey(target, owner, model), countedApart(dialect, o), tier);
  o = counted.o;
  const key = counted.key;
  account = state.accounts.get(key) ?? new Account();
  state.accounts.set(key, account);
  if (o.maxConcurrent > 0 && account.inFlight >= o.maxConcurrent) {
    return refuse(dialect.tooManyConcurrent(model, o.organization), "rate_limited", retryAfter(o, 1000, Date.now(), dialect.retryHeaders), "concurrency");
  }
  // A prompt whose cached prefix is read counts only the rest against the input window (prompt-cache.ts).
  // A count uses no caching logic (build-with-claude/token-counting, FAQ).
  const prefix = dialect.promptCache && !counting ? cachePrefix(req.body) : null;
  const read = prefix !== null && account.prompts.hit(model, prefix, Date.now());
  // Every answer's allowance (`n` of them): OpenAI's cookbook (examples/api_request_parallel_processor.py)
  // counts prompt + n x max_tokens against TPM, and a third party saw max_tokens 5,000 with n 100
  // refused as 500,000 tokens (community.openai.com/t/360359).
  const cost = counting ? { input: 0, output: 0 } : { input: req.promptTokens - (read ? prefix.tokens : 0), output: endpoint === "/embeddings" || dialect.inputTpm ? 0 : (req.maxTokens ?? o.outputTokens) * req.choices };
  const admission = account.admit(o, cost, performance.now());
  if (!admission.ok) {
    const err = dialect.rateLimited(admission, model, o.organization, endpoint);
    return refuse(err, "rate_limited", retryAfter(o, admission.waitMs, Date.now(), dialect.retryHeaders), admission.kind);
  }

  const fault = state.dice.fault(faultsFor(o.faults, req.serviceTier));
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
      const page = cloudflare524(dialect.host);
      res.writeHead(524, "A Timeout Occurred", { ...page.headers, "content-length": Buffer.byteLength(page.body) });
      res.end(page.body);
    } else if (fault) {
      if (fault === "500") await sleep(totalMs, res);
      const err = dialect.fault(Number(fault) as 498 | 500 | 503 | 529);
      sendJson(res, err.status, dialect.stamp(err.body, ids), okHeaders);
    } else {
      const reply = makeReply(req, o);
      if (prefix) reply[read ? "cacheRead" : "cacheWrite"] = prefix.tokens;
      const result = dialect.endpoints[endpoint]!(req, reply);
      const served = tier ?? "standard";
      Object.assign(okHeaders, reportTier(dialect, result, served));
      const output = endpoint === "/embeddings" ? 0 : reply.outputTokens;
      const streamed = "stream" in result;
      // A count is free: it serves and bills no tokens.
      if (!counting) state.stats.served(served, reply.inputTokens, output, charge(o, dialect, model, served, reply.inputTokens, output));
      // What the answer reports in its usage is what it served (some streams report it only when asked).
      if (!counting && (!streamed || dialect.reportsStreamUsage(endpoint, req)))
        state.stats.used(reply.inputTokens, output, owner, model);
      const opened = o.heldMs > 0 && (await holdOpen(res, dialect, streamed, okHeaders, o.heldMs, o.keepAliveMs));
      if (streamed) await writeStream(res, result.stream, totalMs, okHeaders, dialect.sseEol, opened);
      else {
        await sleep(totalMs, res);
        if (!opened) sendJson(res, 200, result.json, okHeaders);
        else if (!res.destroyed) res.end(JSON.stringify(result.json)); // after the keep-alive lines, with no content-length
      }
      // Cached once its response has begun (here, once sent): requests that came meanwhile wrote it too.
      if (prefix) account.prompts.keep(model, prefix, Date.now());
    }
  } finally {
    account.inFlight--;
    state.stats.end(res.destroyed && !res.writableFinished);
  }
}
