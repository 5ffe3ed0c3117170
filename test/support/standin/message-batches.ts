// Anthropic's Message Batches API (/v1/messages/batches): requests inline, run on the batch clock,
// results as JSONL once the batch has ended.
import type { Call } from "./batch-api.ts";
import { type BatchStatus, isEnded } from "./batch-clock.ts";
import { advance, counts, enqueued, lineTokens, listOf, page, type StoredBatch } from "./batch-run.ts";
import { base62 } from "./reply.ts";

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const error = (type: string, message: string) => ({ type: "error", error: { type, message } });
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const PROCESSING: Record<BatchStatus, "in_progress" | "canceling" | "ended"> = {
  validating: "in_progress", in_progress: "in_progress", finalizing: "in_progress", cancelling: "canceling",
  failed: "ended", completed: "ended", expired: "ended", cancelled: "ended",
};

function view(call: Call, b: StoredBatch): Record<string, unknown> {
  const p = advance(call.state.book, b, call.state.options, call.now);
  const c = counts(b);
  const ended = isEnded(p.status);
  const endedAt = p.completedAt ?? p.expiredAt ?? p.cancelledAt ?? p.failedAt;
  return {
    id: b.id, type: "message_batch", processing_status: PROCESSING[p.status],
    request_counts: { processing: b.lines.length - b.results.length, succeeded: c.succeeded, errored: c.failed, canceled: c.cancelled, expired: c.expired },
    ended_at: iso(endedAt), created_at: iso(b.clock.createdAt), expires_at: iso(b.clock.expiresAt), archived_at: null,
    // The provider's own origin, as the real one names itself: here, the host the call came to.
    cancel_initiated_at: iso(b.clock.cancelAt), results_url: ended ? `http://${call.headers.host ?? "127.0.0.1"}/v1/messages/batches/${b.id}/results` : null,
  };
}

/** POST /v1/messages/batches {requests: [{custom_id, params}]} */
export function createMessageBatch(call: Call): void {
  const o = call.state.options;
  if (call.body.length > o.batchMaxBytes) return call.json(413, error("request_too_large", `Request exceeds the maximum allowed number of bytes (${o.batchMaxBytes}).`));
  let req: { requests?: unknown };
  try {
    req = JSON.parse(call.body.toString("utf8") || "{}") as { requests?: unknown };
  } catch {
    return call.json(400, error("invalid_request_error", "Invalid JSON body"));
  }
  if (!Array.isArray(req.requests) || req.requests.length === 0) return call.json(400, error("invalid_request_error", "requests: Field required (a non-empty list)"));
  if (req.requests.length > o.batchMaxRequests) return call.json(400, error("invalid_request_error", `requests: a batch may hold at most ${o.batchMaxRequests} requests`));
  const seen = new Set<string>();
  const lines = [];
  for (const [i, r] of (req.requests as { custom_id?: unknown; params?: unknown }[]).entries()) {
    const id = r?.custom_id;
    if (typeof id !== "string" || !CUSTOM_ID.test(id)) return call.json(400, error("invalid_request_error", `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`));
    if (seen.has(id)) return call.json(400, error("invalid_request_error", `requests.${i}.custom_id: Duplicate custom_id '${id}'; each request in a batch needs a unique custom_id`));
    seen.add(id);
    if (typeof r.params !== "object" || r.params === null) return call.json(400, error("invalid_request_error", `requests.${i}.params: Field required`));
    lines.push({ customId: id, endpoint: "/messages", body: r.params as Record<string, unknown> });
  }
  const model = String(lines[0]?.body.model ?? "");
  const tokens = lines.reduce((s, l) => s + lineTokens(l, o), 0);
  if (o.batchEnqueuedTokens > 0 && enqueued(call.state.book, call.credential, model, call.now) + tokens > o.batchEnqueuedTokens) {
    call.state.stats.batchEvent("refused");
    return call.json(429, error("rate_limit_error", `This request would exceed your organization's limit of ${o.batchEnqueuedTokens} tokens in batches being processed. Please wait for a batch to end, or reduce the size of this batch.`));
  }
  const b: StoredBatch = {
    id: `msgbatch_01${base62(22)}`, api: "anthropic", credential: call.credential, lines, tokens, model, results: [], closed: false,
    clock: {
      createdAt: call.now, lines: lines.length, validatingMs: o.batchValidatingMs, turnaroundMs: o.batchTurnaroundMs,
      finalizingMs: o.batchFinalizingMs, expiresAt: call.now + o.batchExpireMs, refused: false, cancelAt: null,
    },
    endpoint: "/v1/messages", inputFileId: "", metadata: null, errors: [], outputFileId: null, errorFileId: null,
  };
  call.state.book.batches.set(b.id, b);
  call.state.stats.batchEvent("created");
  call.json(200, view(call, b));
}

function owned(call: Call, id: string): StoredBatch | null {
  const b = call.state.book.batches.get(id);
  return b && b.api === "anthropic" && b.credential === call.credential ? b : null;
}

const missing = (call: Call, id: string) => call.json(404, error("not_found_error", `message_batch ${id} not found`));

export function getMessageBatch(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return missing(call, id);
  call.json(200, view(call, b));
}

/** GET /v1/messages/batches (?limit=20, after_id=): newest first. */
export function listMessageBatches(call: Call): void {
  const all = listOf(call.state.book, "anthropic", call.credential);
  const { data, hasMore } = page(all, call.query.get("after_id"), Math.min(1000, Number(call.query.get("limit") ?? 20)));
  call.json(200, { data: data.map((b) => view(call, b)), has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}

export function cancelMessageBatch(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return missing(call, id);
  const status = advance(call.state.book, b, call.state.options, call.now).status;
  if (!isEnded(status) && b.clock.cancelAt === null) {
    b.clock.cancelAt = call.now;
    call.state.stats.batchEvent("cancels");
  }
  call.json(200, view(call, b));
}

export function deleteMessageBatch(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return missing(call, id);
  if (!isEnded(advance(call.state.book, b, call.state.options, call.now).status))
    return call.json(400, error("invalid_request_error", `Message batch ${id} cannot be deleted while it is being processed; cancel it first.`));
  call.state.book.batches.delete(id);
  call.json(200, { id, type: "message_batch_deleted" });
}

/** GET /v1/messages/batches/{id}/results: one JSON line per request, once the batch has ended. */
export function resultsOf(call: Call, id: string): void {
  const b = owned(call, id);
  if (!b) return missing(call, id);
  if (!isEnded(advance(call.state.book, b, call.state.options, call.now).status))
    return call.json(404, error("not_found_error", `No results are available for message_batch ${id} yet: it has not ended`));
  const lines = b.results.map((r) => {
    const result =
      r.kind === "succeeded" ? { type: "succeeded", message: r.body } : r.kind === "failed" ? { type: "errored", error: r.body } : { type: r.kind === "cancelled" ? "canceled" : "expired" };
    return JSON.stringify({ custom_id: r.customId, result });
  });
  call.bytes(200, Buffer.from(`${lines.join("\n")}\n`), "application/x-jsonl");
}
