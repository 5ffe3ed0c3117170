// Gemini's native API: POST /v1beta/models/<model>:generateContent and
// :streamGenerateContent?alt=sse (without alt=sse: one JSON array of the chunks), credential in
// `x-goog-api-key` or `?key=` (ai.google.dev `api/generate-content`, `gemini-api/docs/api-key`).
//
// - Answers carry `usageMetadata` (promptTokenCount, candidatesTokenCount, totalTokenCount); in a
//   stream every chunk carries it, the counts so far, the last chunk's final (the REST reference's
//   GenerateContentResponse.usageMetadata; per-chunk counts as observed streams show, third party).
// - Server-sent events end their lines with CRLF here (Google's js-genai splits events on \n\n,
//   \r\r or \r\n\r\n; CRLF as observed, third party): a reader that splits only on "\n\n" meets them.
// - No rate-limit headers; a 429 is RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo (google.ts).
// - Limits hold per project and per model ("Rate limits are applied per project, not per API key";
//   RPM, TPM (input) and RPD, RPD reset at midnight Pacific: ai.google.dev `gemini-api/docs/rate-limits`):
//   a stand-in credential is a project, its account scoped to the model.
import type { Dialect, EndpointResult, ErrorReply, SseEvent } from "./dialect.ts";
import { badKey, dayQuotaSpent, googleError, noKey, resourceExhausted } from "./google.ts";
import { base62 } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";

/** `.../models/<model>:<verb>` under any version (v1beta, v1, v1alpha). */
const PATH = /\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The model and endpoint of a native path; a stream asked with alt=sse is an endpoint of its own. */
export function geminiPath(path: string, query: URLSearchParams): { model: string; endpoint: string; stream: boolean } | null {
  const m = PATH.exec(path.replace(/\/+$/, ""));
  if (!m) return null;
  const stream = m[2] === "streamGenerateContent";
  const endpoint = stream && query.get("alt") === "sse" ? ":streamGenerateContent?alt=sse" : `:${m[2]}`;
  return { model: decodeURIComponent(m[1]!), endpoint, stream };
}

const generate = (sse: boolean) => (req: ParsedRequest, r: Reply): EndpointResult => {
  const responseId = base62(22);
  const finish = r.truncated ? "MAX_TOKENS" : "STOP";
  const usage = (candidates: number) => ({
    promptTokenCount: r.inputTokens,
    candidatesTokenCount: candidates,
    totalTokenCount: r.inputTokens + candidates,
    promptTokensDetails: [{ modality: "TEXT", tokenCount: r.inputTokens }],
  });
  const answer = (text: string, finishReason: string | null, candidates: number) => ({
    candidates: [{ content: { parts: [{ text }], role: "model" }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata: usage(candidates),
    modelVersion: r.model,
    responseId,
  });
  if (!req.stream) return { json: answer(r.text, finish, r.outputTokens) };
  // Each chunk's candidatesTokenCount is the output so far: one word is one token here.
  let so = 0;
  const chunks = r.pieces.map((p, i) => {
    so += p.trim().split(/\s+/).filter(Boolean).length;
    return answer(p, i === r.pieces.length - 1 ? finish : null, i === r.pieces.length - 1 ? r.outputTokens : so);
  });
  if (!sse) return { json: chunks };
  const events: SseEvent[] = chunks.map((data) => ({ data }));
  return { stream: { head: [], deltas: events.slice(0, -1), tail: events.slice(-1) } };
};

const error = (code: number, message: string): ErrorReply => ({ status: code, body: googleError(code, message) });

export const gemini: Dialect = {
  name: "gemini",
  host: "generativelanguage.googleapis.com",
  scope: "model",
  retryHeaders: "none",
  sseEol: "\r\n",
  inputTpm: true,
  endpoints: { ":generateContent": generate(false), ":streamGenerateContent": generate(false), ":streamGenerateContent?alt=sse": generate(true) },
  reportsStreamUsage: () => true,

  credential(h, query) {
    if (typeof h["x-goog-api-key"] === "string" && h["x-goog-api-key"]) return h["x-goog-api-key"];
    const key = query?.get("key");
    if (key) return key;
    return /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined;
  },

  check(_h, req) {
    if (!Array.isArray(req.body.contents)) return error(400, "* GenerateContentRequest.contents: contents is not specified\n");
    return null;
  },

  requestId: () => ({}),
  stamp: (body) => body,
  limitHeaders: () => ({}),
  unauthorized: (credential) => (credential === undefined ? { status: 403, body: noKey() } : { status: 400, body: badKey() }),
  invalid: (message) => error(400, message),
  notFound: () => error(404, "Requested entity was not found."),
  unknownModel: (model) => error(404, `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`),
  identity: () => ({}),
  rateLimited: (r, model) => ({ status: 429, body: resourceExhausted(r, model) }),
  tooManyConcurrent: (model) => ({ status: 429, body: resourceExhausted({ kind: "requests", limit: 0, waitMs: 1000 }, model) }),
  quotaExhausted: (model) => ({ status: 429, body: dayQuotaSpent(model) }),
  fault(status) {
    if (status === 500) return error(500, "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting");
    return error(503, "The model is overloaded. Please try again later.");
  },
};
