// OpenAI's Batch API (/v1/batches): a batch over an uploaded JSONL file, validated, run line by
// line on the batch clock, its answers in an output file and its failures in an error file.
import type { Call } from "./batch-api.ts";
import { isEnded, type Progress } from "./batch-clock.ts";
import { advance, type BatchLine, counts, enqueued, lineTokens, listOf, page, type StoredBatch, unixSeconds } from "./batch-run.ts";
import { filesOf, newFile, noFile } from "./files.ts";
import { base62, hex } from "./reply.ts";

const ENDPOINTS = ["/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/responses"];
const invalid = (message: string, param: string | null = null) => ({ error: { message, type: "invalid_request_error", param, code: null } });
type LineError = StoredBatch["errors"][number];

/** The file's lines as a batch's requests, or the validation errors that fail the batch. */
export function readInput(content: Buffer, endpoint: string, maxRequests: number): { lines: BatchLine[]; model: string; errors: LineError[] } {
  const lines: BatchLine[] = [];
  const errors: LineError[] = [];
  const seen = new Set<string>();
  let model = "";
  const err = (line: number, code: string, message: string, param: string | null = null) => errors.push({ code, message, param, line });
  content.toString("utf8").split("\n").forEach((text, i) => {
    if (text.trim() === "" || errors.length >= 10) return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return err(i + 1, "invalid_json_line", "This line is not parseable as valid JSON.");
    }
    const body = v?.body as Record<string, unknown> | undefined;
    if (typeof v?.custom_id !== "string") return err(i + 1, "missing_required_parameter", "Missing required parameter: 'custom_id'.", "custom_id");
    if (seen.has(v.custom_id)) return err(i + 1, "duplicate_custom_id", `The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.`, "custom_id");
    seen.add(v.custom_id);
    if (v.method !== "POST") return err(i + 1, "invalid_method", "The method must be POST.", "method");
    if (v.url !== endpoint) return err(i + 1, "mismatched_endpoint", `The provided url '${String(v.url)}' does not match the batch endpoint '${endpoint}'.`, "url");
    if (typeof body !== "object" || body === null || typeof body.model !== "string") return err(i + 1, "missing_required_parameter", "Missing required parameter: 'body.model'.", "body.model");
    if (model && body.model !== model) return err(i + 1, "mismatched_model", "The provided model does not match the model of the other requests in this batch: a batch holds requests to one model.", "body.model");
    model = body.model;
    lines.push({ customId: v.custom_id, endpoint: endpoint.replace(/^\/v1/, ""), body });
  });
  if (errors.length === 0 && lines.length === 0) err(0, "empty_file", "The batch input file is empty.");
  if (lines.length > maxRequests) err(0, "too_many_requests", `A batch may hold at most ${maxRequests} requests; this file holds ${lines.length}.`);
  return { lines, model, errors };
}

/** POST /v1/batches {input_file_id, endpoint, completion_window, metadata?} */
export function createBatch(call: Call): void {
  let req: Record<string, unknown>;
  try {
    req = JSON.parse(call.body.toString("utf8") || "{}") as Record<string, unknown>;
  } catch {
    return call.json(400, invalid("We could not parse the JSON body of your request."));
  }
  const o = call.state.options;
  const fileId = req.input_file_id;
  if (typeof fileId !== "string") return call.json(400, invalid("Missing required parameter: 'input_file_id'.", "input_file_id"));
  if (typeof req.endpoint !== "string" || !ENDPOINTS.includes(req.endpoint)) return call.json(400, invalid(`'endpoint' must be one of ${ENDPOINTS.join(", ")}`, "endpoint"));
  if (req.completion_window !== "24h") return call.json(400, invalid("'completion_window' must be '24h'", "completion_window"));
  const file = filesOf(call).get(fileId);
  if (!file) return noFile(call, fileId);
  if (file.object.purpose !== "batch") return call.json(400, invalid(`File ${fileId} has purpose '${file.object.purpose}'; a batch needs a file with purpose 'batch'.`, "input_file_id"));
  const { lines, model, errors } = readInput(file.content, req.endpoint, o.batchMaxRequests);
  const tokens = lines.reduce((s, l) => s + lineTokens(l, o), 0);
  if (errors.length === 0 && o.batchEnqueuedTokens > 0 && enqueued(call.state.book, call.credential, model, call.now) + tokens > o.batchEnqueuedTokens)
    errors.push({ code: "token_limit_exceeded", message: `Enqueued token limit reached for ${model} in organization ${o.organization}. Limit: ${o.batchEnqueuedTokens.toLocaleString("en-US")} enqueued tokens. Please try again once some in_progress batches have been completed.`, param: null, line: null });
  const refused = errors.length > 0;
  const b: StoredBatch = {
    id: `batch_${hex(32)}`, api: "openai", credential: call.credential, lines, tokens: refused ? 0 : tokens, model, results: [], closed: false,
    clock: {
      createdAt: call.now, lines: lines.length, validatingMs: o.batchValidatingMs, turnaroundMs: o.batchTurnaroundMs,
      finalizingMs: o.batchFinalizingMs, expiresAt: call.now + o.batchExpireMs, refused, cancelAt: null,
    },
    endpoint: req.endpoint, inputFileId: fileId, metadata: (req.metadata as Record<string, string> | undefined) ?? null, errors,
    outputFileId: null, errorFileId: null,
  };
  call.state.book.batches.set(b.id, b);
  call.state.stats.batchEvent("created");
  if (refused) call.state.stats.batchEvent("refused");
  call.json(200, view(call, b));
}

const EXPIRED = { code: "batch_expired", message: "This request could not be executed before the completion window expired." };
const CANCELLED = { code: "batch_cancelled", message: "This request was not executed because the batch was cancelled." };

/** Once ended: the output file (answered lines) and the error file (the rest), as OpenAI writes them. */
function writeFiles(call: Call, b: StoredBatch): void {
  if (b.outputFileId !== null || b.errorFileId !== null || b.clock.refused) return;
  const out: string[] = [];
  const errs: string[] = [];
  for (const r of b.results) {
    const id = `batch_req_${base62(24)}`;
    const response = r.status > 0 ? { status_code: r.status, request_id: r.requestId, body: r.body } : null;
    const error = r.kind === "expired" ? EXPIRED : r.kind === "cancelled" ? CANCELLED : null;
    (r.kind === "succeeded" ? out : errs).push(JSON.stringify({ id, custom_id: r.customId, response, error }));
  }
  const store = (lines: string[], kind: string) => {
    if (lines.length === 0) return null;
    const f = newFile(`batch_${b.id}_${kind}.jsonl`, "batch_output", Buffer.from(`${lines.join("\n")}\n`), call.now);
    filesOf(call).set(f.object.id, f);
    return f.object.id;
  };
  b.outputFileId = store(out, "output");
  b.errorFileId = store(errs, "error");
}

/** The batch object as the API shows it now. */
export function view(call: Call, b: StoredBatch): Record<string, unknown> {
  const p: Progress = advance(call.state.book, b, call.state.options, call.now);
  if (isEnded(p.status)) writeFiles(call, b);
  const c = counts(b);
  const started = p.inProgressAt !== null;
  return {
    id: b.id, object: "batch", endpoint: b.endpoint, errors: b.errors.length ? { object: "list", data: b.errors } : null,
    input_file_id: b.inputFileId, completion_window: "24h", status: p.status, output_file_id: b.outputFileId, error_file_id: b.errorFileId,
    created_at: unixSeconds(b.clock.createdAt), in_progress_at: unixSeconds(p.inProgressAt), expires_at: unixSeconds(b.clock.expiresAt),
    finalizing_at: unixSeconds(p.finalizingAt), completed_at: unixSeconds(p.completedAt), failed_at: unixSeconds(p.failedAt),
    expired_at: unixSeconds(p.expiredAt), cancelling_at: unixSeconds(p.cancellingAt), cancelled_at: unixSeconds(p.cancelledAt),
    request_counts: { total: started || p.status === "cancelled" ? b.lines.length : 0, completed: c.succeeded, failed: c.failed + c.expired + c.cancelled },
    metadata: b.metadata,
  };
}

function owned(call: Call, id: string): StoredBatch | null {
  const b = call.state.book.batches.get(id);
  return b && b.api === "openai" && b.credential === call.credential ? b : null;
}

const noBatch = (call: Call, id: string) => call.json(404, invalid(`No batch found with id '${id}'.`, "batch_id"));

export function getBatch(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return noBatch(call, id);
  call.json(200, view(call, b));
}

/** POST /v1/batches/{id}/cancel: `cancelling`, then `cancelled`, what ended before kept. */
export function cancelBatch(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return noBatch(call, id);
  const status = advance(call.state.book, b, call.state.options, call.now).status;
  if (isEnded(status) || status === "cancelling") return call.json(409, invalid(`Cannot cancel a batch with status '${status}'.`));
  b.clock.cancelAt = call.now;
  call.state.stats.batchEvent("cancels");
  call.json(200, view(call, b));
}

/** GET /v1/batches (?limit=20, after=): newest first. */
export function listBatches(call: Call): void {
  const all = listOf(call.state.book, "openai", call.credential);
  const { data, hasMore } = page(all, call.query.get("after"), Math.min(100, Number(call.query.get("limit") ?? 20)));
  call.json(200, { object: "list", data: data.map((b) => view(call, b)), first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}
