// The endpoints that are not a generation: OpenAI's /v1/files, /v1/batches and /v1/models, Anthropic's
// /v1/messages/batches. Matched by suffix like the rest; each call is logged as an attempt.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { anthropic } from "./anthropic.ts";
import { credentialHeaders, sendJson, type State } from "./handle.ts";
import { cancelBatch, createBatch, getBatch, listBatches } from "./openai-batches.ts";
import { contentOf, deleteFile, getFile, listFiles, upload } from "./files.ts";
import { getModel, listModels } from "./models.ts";
import { cancelMessageBatch, createMessageBatch, deleteMessageBatch, getMessageBatch, listMessageBatches, resultsOf } from "./message-batches.ts";
import { openai } from "./openai.ts";
import type { Outcome } from "./stats.ts";

/** One call to a file or batch endpoint, checked for its credential; what its handler answers with. */
export interface Call {
  state: State;
  credential: string;
  query: URLSearchParams;
  body: Buffer;
  headers: IncomingHttpHeaders;
  now: number;
  json(status: number, body: unknown): void;
  bytes(status: number, bytes: Buffer, contentType: string): void;
}

type Handler = (call: Call, id: string) => void | Promise<void>;
type Api = "openai" | "anthropic";

const ROUTES: [method: string, path: RegExp, api: Api, handler: Handler][] = [
  ["POST", /\/v1\/files$/, "openai", upload],
  ["GET", /\/v1\/files$/, "openai", listFiles],
  ["GET", /\/v1\/files\/([^/]+)$/, "openai", getFile],
  ["DELETE", /\/v1\/files\/([^/]+)$/, "openai", deleteFile],
  ["GET", /\/v1\/files\/([^/]+)\/content$/, "openai", contentOf],
  ["POST", /\/v1\/batches$/, "openai", createBatch],
  ["GET", /\/v1\/batches$/, "openai", listBatches],
  ["GET", /\/v1\/batches\/([^/]+)$/, "openai", getBatch],
  ["POST", /\/v1\/batches\/([^/]+)\/cancel$/, "openai", cancelBatch],
  ["POST", /\/v1\/messages\/batches$/, "anthropic", createMessageBatch],
  ["GET", /\/v1\/messages\/batches$/, "anthropic", listMessageBatches],
  ["GET", /\/v1\/messages\/batches\/([^/]+)$/, "anthropic", getMessageBatch],
  ["DELETE", /\/v1\/messages\/batches\/([^/]+)$/, "anthropic", deleteMessageBatch],
  ["GET", /\/v1\/messages\/batches\/([^/]+)\/results$/, "anthropic", resultsOf],
  ["POST", /\/v1\/messages\/batches\/([^/]+)\/cancel$/, "anthropic", cancelMessageBatch],
  ["GET", /\/v1\/models$/, "openai", listModels],
  ["GET", /\/v1\/models\/([^/]+)$/, "openai", getModel],
];

/** A batch input (a file, or Anthropic's inline requests) may be this large. */
const MAX_BATCH_BODY = 256 * 1024 * 1024;

/** A request's body, whole, refused past `max` bytes. */
export function readBytes(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) reject(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Answers a file or batch call and returns true; false when `path` is none of them. */
export async function handleBatchApi(state: State, req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<boolean> {
  const found = ROUTES.find(([method, re]) => method === req.method && re.test(path));
  if (!found) return false;
  const [, re, api, handler] = found;
  const dialect = api === "openai" ? openai : anthropic;
  const h = req.headers;
  const credential = dialect.credential(h);
  const body = await readBytes(req, MAX_BATCH_BODY);
  const ids = dialect.requestId();
  const record = (status: number) => {
    const outcome: Outcome = status < 400 ? "success" : status === 401 ? "unauthorized" : "invalid";
    state.stats.record(
      { at: Date.now(), credential: credential ?? null, ...credentialHeaders(h, credential), provider: api, path, query, model: "", stream: false, status, outcome },
      state.options.logLimit,
    );
  };
  const headers = { ...ids, ...dialect.identity(state.options.organization) };
  if (!credential || (state.options.apiKeys && !state.options.apiKeys.includes(credential))) {
    const err = dialect.unauthorized(credential);
    record(err.status);
    sendJson(res, err.status, dialect.stamp(err.body, ids), headers);
    return true;
  }
  if (api === "anthropic" && !h["anthropic-version"]) {
    record(400);
    sendJson(res, 400, dialect.stamp(dialect.invalid("anthropic-version: header is required").body, ids), headers);
    return true;
  }
  const call: Call = {
    state, credential, query: new URLSearchParams(query), body, headers: h, now: Date.now(),
    json(status, out) {
      record(status);
      sendJson(res, status, status >= 400 ? dialect.stamp(out, ids) : out, headers);
    },
    bytes(status, out, contentType) {
      record(status);
      if (res.destroyed) return;
      res.writeHead(status, { ...headers, "content-type": contentType, "content-length": out.length });
      res.end(out);
    },
  };
  await handler(call, decodeURIComponent(re.exec(path)?.[1] ?? ""));
  return true;
}
