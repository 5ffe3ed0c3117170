// The stand-in Amazon Bedrock runtime (bedrock-runtime.<region>.amazonaws.com), beside the other
// providers on the same server:
//
//   POST [/bedrock/<region>]/model/<modelId>/invoke | invoke-with-response-stream | converse | converse-stream
//   POST /bedrock/<region>/openai/v1/chat/completions (and /bedrock/<region>/v1/chat/completions)
//
// At AWS each region is its own host; here a path prefix `/bedrock/<region>` plays the host, so one
// port serves every region and a client's base URL (its `endpoint`) names the region as the host
// would. A path without the prefix reaches `bedrock.region`. A bearer request's region is the
// host's (a short-term API key works only in its own region: userguide/api-keys.html); a signed
// one's is its credential scope's, and a scope that names another region than the host's is refused.
// The OpenAI-compatible route (userguide/inference-chat-completions.html) has no unprefixed form:
// `/openai/v1/chat/completions` is the stand-in OpenAI's.
//
// Order per request: credential (bedrock-auth.ts) -> body -> limits per account, region and model
// (requests and tokens per minute, token buckets; a refusal is a 429 ThrottlingException with no
// rate-limit or retry-after header) -> fault roll -> latency -> answer, streams in event-stream
// frames. What each answer reports is charged to its account and model (stats().bedrock).
//
// Tokens per minute count input and output together, per model and region, shared by every API
// (userguide/quotas-runtime.html). A request reserves its input plus its output limit when it starts
// (the model's whole output when it names none), and when it ends is settled at what it drew: its
// input and its output, output counting five times for Claude 3.7 Sonnet and the Claude 4 family
// ("token burndown rate", userguide/quotas-token-burndown.html), the rest given back or, past the
// reservation, taken then (AWS's own agent toolkit, aws/agent-toolkit-for-aws
// `skills/core-skills/amazon-bedrock/references/quota-health.md`, and AWS's sample
// `aws-samples/sample-quota-dashboard-for-amazon-bedrock`: the reservation is not at the burndown rate).
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBytes } from "./batch-api.ts";
import { bedrockCaller, isRefusal } from "./bedrock-auth.ts";
import { type BedrockOptions, limitFor, maxOutputOf, outputBurndown } from "./bedrock-options.ts";
import {
  type BedrockError, bedrockError, converseBody, converseStream, exceptionFrame, FAULTS, familyOf, type FramePlan, invokeBody, invokeStream,
  requestId, resourceId, TOO_MANY_REQUESTS, TOO_MANY_TOKENS, usageHeaders,
} from "./bedrock-replies.ts";
import { mulberry32 } from "./faults.ts";
import type { State } from "./handle.ts";
import { credentialHeaders, sendJson } from "./handle.ts";
import { Account } from "./limits.ts";
import type { StandinOptions } from "./options.ts";
import { chat } from "./openai.ts";
import { makeReply } from "./reply.ts";
import { parseRequest } from "./request.ts";
import type { ParsedRequest } from "./request.ts";
import type { Outcome } from "./stats.ts";
import { sleep, writeStream } from "./write.ts";

type Operation = "invoke" | "invoke-with-response-stream" | "converse" | "converse-stream" | "chat";

interface BedrockRoute {
  region: string;
  operation: Operation;
  /** The model the path names (decoded); for chat completions, the body's. */
  model: string | null;
}

const MODEL_PATH = /^(?:\/bedrock\/([a-z0-9-]+))?\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/;
const CHAT_PATH = /^\/bedrock\/([a-z0-9-]+)(?:\/openai)?\/v1\/chat\/completions$/;

export function bedrockRoute(path: string, defaultRegion: string): BedrockRoute | null {
  const m = MODEL_PATH.exec(path);
  if (m) return { region: m[1] ?? defaultRegion, operation: m[3] as Operation, model: decodeURIComponent(m[2]!) };
  const c = CHAT_PATH.exec(path);
  return c ? { region: c[1]!, operation: "chat", model: null } : null;
}

/** Each state's own draws for Bedrock's faults, so they never shift the other providers' sequence. */
const DRAWS = new WeakMap<State, () => number>();
const draw = (state: State) => {
  let d = DRAWS.get(state);
  if (!d) DRAWS.set(state, (d = mulberry32(state.options.seed ^ 0x0bed0c)));
  return d();
};
function pick<K extends string>(state: State, rates: Partial<Record<K, number>>): K | null {
  const x = draw(state);
  let edge = 0;
  for (const [k, r] of Object.entries(rates) as [K, number][]) if (x < (edge += r)) return k;
  return null;
}

/** The request as the reply maker reads it: Converse's and Llama's own output limits, the model the path names. */
function asked(body: Record<string, unknown>, raw: string, model: string, stream: boolean): ParsedRequest | string {
  const p = parseRequest(raw);
  if (typeof p === "string") return p;
  const inference = body.inferenceConfig as { maxTokens?: unknown } | undefined;
  const max = [p.maxTokens, inference?.maxTokens, body.max_gen_len].find((v) => typeof v === "number" && v >= 0) as number | undefined;
  // Converse's user turn is `content: [{text}]`, which lastUserText reads; Llama's prompt is a string.
  return { ...p, model, stream, maxTokens: max ?? null, lastUserText: p.lastUserText || (typeof body.prompt === "string" ? body.prompt : "") };
}

/**
 * The checks Bedrock makes of a body before inference; the message's form is its JSON-schema
 * validator's (observed, third party). Claude's InvokeModel body names neither its model nor a
 * stream (the path does: model-parameters-anthropic-claude-messages): either is an extraneous key
 * (`#: extraneous key [model] is not permitted`, as fumito-ito/AnthropicSwiftSDK#19 and
 * sigoden/aichat#543 quote it).
 */
function invalid(op: Operation, family: string, body: Record<string, unknown>): string | null {
  const required = (key: string) => `Malformed input request: #: required key [${key}] not found, please reformat your input and try again.`;
  if (op === "converse" || op === "converse-stream") return Array.isArray(body.messages) ? null : "The model returned the following errors: messages: Field required";
  if (op === "chat") return typeof body.model === "string" && Array.isArray(body.messages) ? null : "messages and model are required";
  if (family === "anthropic") {
    for (const k of ["anthropic_version", "max_tokens", "messages"]) if (!(k in body)) return required(k);
    const extra = ["model", "stream"].filter((k) => k in body);
    if (extra.length) return `Malformed input request: ${extra.map((k) => `#: extraneous key [${k}] is not permitted`).join("")}, please reformat your input and try again.`;
  }
  return null;
}

/** The limits one account, region and model hold, as the shared token buckets read them. */
const limitOptions = (o: StandinOptions, b: BedrockOptions, account: string, region: string, model: string): StandinOptions => {
  const l = limitFor(b, account, region, model);
  return { ...o, rpm: l.rpm ?? o.rpm, tpm: l.tpm ?? o.tpm, itpm: null, otpm: null, rpd: 0, monthlyTokens: 0, maxConcurrent: 0 };
};

/** Writes frames: `head` after one share of the latency, each delta after another, then `tail`. */
async function writeFrames(res: ServerResponse, plan: FramePlan, totalMs: number, headers: Record<string, string>): Promise<void> {
  const gap = totalMs / (plan.deltas.length + 1);
  await sleep(gap, res);
  if (res.destroyed) return;
  res.writeHead(200, { ...headers, "content-type": "application/vnd.amazon.eventstream", "transfer-encoding": "chunked" });
  for (const f of plan.head) res.write(f);
  for (const f of plan.deltas) {
    await sleep(gap, res);
    if (res.destroyed) return;
    res.write(f);
  }
  res.end(Buffer.concat(plan.tail));
}

/** Answers a Bedrock request; false when `path` is none of Bedrock's. */
export async function handleBedrock(state: State, req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<boolean> {
  const b = state.options.bedrock;
  const route = req.method === "POST" ? bedrockRoute(path, b.region) : null;
  if (!route) return false;
  const raw = await readBytes(req, 32 * 1024 * 1024);
  const ids = requestId();
  const at = Date.now();
  let model = route.model ?? "";
  let credential: string | null = null;
  const record = (status: number, outcome: Outcome) =>
    state.stats.record({ at, credential, ...credentialHeaders(req.headers, credential ?? undefined), provider: "bedrock", path, query, model, stream: route.operation.includes("stream"), status, outcome }, state.options.logLimit);
  const refuse = (e: BedrockError, outcome: Outcome) => {
    record(e.status, outcome);
    sendJson(res, e.status, e.body, { ...ids, ...e.headers });
  };

  const caller = await bedrockCaller(b, req.method!, path, query, req.headers, raw, route.region);
  if (isRefusal(caller)) return refuse(bedrockError(caller.status, caller.type, Object.values(caller.body)[0]!, caller.namespace, Object.keys(caller.body)[0]), "unauthorized"), true;
  credential = caller.credential;
  const text = raw.toString("utf8");
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error();
  } catch {
    return refuse(bedrockError(400, "ValidationException", "Malformed input request, please reformat your input and try again."), "invalid"), true;
  }
  if (route.operation === "chat") model = typeof body.model === "string" ? body.model : "";
  const family = familyOf(model);
  const bad = invalid(route.operation, family, body);
  if (bad) return refuse(bedrockError(400, "ValidationException", bad), "invalid"), true;
  const stream = route.operation === "invoke-with-response-stream" || route.operation === "converse-stream" || (route.operation === "chat" && body.stream === true);
  const parsed = asked(body, text, model, stream);
  if (typeof parsed === "string") return refuse(bedrockError(400, "ValidationException", parsed), "invalid"), true;

  const scope = resourceId(model);
  const o = limitOptions(state.options, b, caller.account, caller.region, scope);
  const key = `bedrock\u0000${caller.account}\u0000${caller.region}\u0000${scope}`;
  const account = state.accounts.get(key) ?? new Account();
  state.accounts.set(key, account);
  // A request reserves its input and its output limit (the model's whole output when it names
  // none), and is settled at what it drew when it ends, its output at the model's burndown rate
  // (see the top of this file).
  const burn = outputBurndown(scope);
  const reserved = parsed.maxTokens ?? maxOutputOf(scope) ?? o.outputTokens;
  const admission = account.admit(o, { input: parsed.promptTokens, output: reserved }, performance.now());
  if (!admission.ok) {
    const message = admission.kind === "requests" ? TOO_MANY_REQUESTS : TOO_MANY_TOKENS;
    state.stats.record({ at, credential, ...credentialHeaders(req.headers, credential), provider: "bedrock", path, query, model, stream, status: 429, outcome: "rate_limited" }, o.logLimit, admission.kind);
    sendJson(res, 429, { message }, { ...ids, ...bedrockError(429, "ThrottlingException", message).headers });
    return true;
  }
  const fault = pick(state, b.faults);
  if (fault) {
    // Refused before inference: the whole reservation comes back.
    account.refund(o, { input: parsed.promptTokens, output: reserved }, performance.now());
    const [status, message] = FAULTS[fault]!;
    return refuse(bedrockError(status, fault, message), "fault"), true;
  }

  record(200, "success");
  const reply = makeReply(parsed, o);
  const totalMs = o.latencyMs + state.dice.jitter(o.jitterMs);
  const streamFault = stream && route.operation !== "chat" ? pick(state, b.streamFaults) : null;
  // An exception ends a stream after its first events: what it reported so far is all it reports
  // (a Claude stream's message_start: its input, one output token).
  const started = route.operation === "invoke-with-response-stream" && family === "anthropic" ? { input: reply.inputTokens, output: 1 } : null;
  const reported = streamFault ? started : { input: reply.inputTokens, output: reply.outputTokens };
  const reportsChatUsage = route.operation !== "chat" || !stream || parsed.includeUsage;
  if (reported && reportsChatUsage) {
    state.stats.used(reported.input, reported.output);
    state.stats.bedrockCharged(caller.account, model, reported.input, reported.output);
  }
  account.inFlight++;
  state.stats.begin();
  try {
    if (route.operation === "chat") {
      const result = chat({ ...parsed, model }, reply);
      if ("stream" in result) await writeStream(res, result.stream, totalMs, ids);
      else (await sleep(totalMs, res), sendJson(res, 200, result.json, ids));
    } else if (stream) {
      const plan = route.operation === "converse-stream" ? converseStream(reply, totalMs) : invokeStream(family, reply, totalMs);
      if (streamFault) plan.tail = [exceptionFrame(streamFault, streamFault === "throttlingException" ? TOO_MANY_TOKENS : "The stream ended with an error.")];
      const extra: Record<string, string> = route.operation === "invoke-with-response-stream" ? { "x-amzn-bedrock-content-type": "application/json" } : {};
      await writeFrames(res, plan, totalMs, { ...ids, ...extra });
    } else {
      await sleep(totalMs, res);
      if (route.operation === "converse") sendJson(res, 200, converseBody(reply, totalMs), ids);
      else sendJson(res, 200, invokeBody(family, reply), { ...ids, ...usageHeaders(reply, totalMs) });
    }
  } finally {
    // Below zero: an answer that drew more than it reserved (five times its output) takes the rest now.
    account.refund(o, { input: 0, output: reserved - (reported?.output ?? 0) * burn }, performance.now());
    account.inFlight--;
    state.stats.end(res.destroyed && !res.writableFinished);
  }
  return true;
}
