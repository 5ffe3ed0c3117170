// A batch API whose input is a file (OpenAI's Batch API: providers/lines.ts `input: "file"`): the
// chunk's lines uploaded as a JSONL file (purpose batch), a batch over it, its output and error
// files read when it ends.
import type { Item } from "../input";
import type { OutputLine } from "../types";
import { type ApiContext, ApiError, type BatchApi, batchCall, type BatchView, isObj, listSince, num, refusal } from "./api";
import { call, type Reply } from "./http";
import type { PlanEvent } from "./journal";

const ENDED = new Set(["completed", "failed", "expired", "cancelled"]);

/** The batch object (OpenAI's) in the job's terms. */
export function viewOf(b: Record<string, unknown>): BatchView {
  const status = String(b.status ?? "");
  const rc = isObj(b.request_counts) ? b.request_counts : {};
  const err = isObj(b.errors) && Array.isArray(b.errors.data) && isObj(b.errors.data[0]) ? b.errors.data[0] : null;
  const code = typeof err?.code === "string" ? err.code : "batch_failed";
  return {
    id: String(b.id ?? ""),
    status,
    ended: ENDED.has(status),
    refused: status === "failed" ? { queue: code === "token_limit_exceeded", code, message: typeof err?.message === "string" ? err.message : "the batch failed validation" } : null,
    counts: { total: num(rc.total), done: num(rc.completed), failed: num(rc.failed) },
    createdAt: num(b.created_at) * 1000,
    metadata: isObj(b.metadata) ? b.metadata : null,
    output: typeof b.output_file_id === "string" ? b.output_file_id : null,
  };
}

/** One JSONL line of the input file, its body as the input gave it. */
const inputLine = (it: Item) => `{"custom_id":${JSON.stringify(it.customId)},"method":"POST","url":${JSON.stringify(it.url)},"body":${it.payload}}`;

export function fileBatchApi(a: ApiContext): BatchApi {
  const json = (url: string) => ({ ...a.headers(url), "content-type": "application/json" });
  const batch = batchCall(a, viewOf);
  const text = async (fileId: string): Promise<string> => {
    const url = `/v1/files/${encodeURIComponent(fileId)}/content`;
    const r: Reply = await call(a.ctx, "GET", `${a.base}${url}`, { headers: a.headers(url) });
    if (r.status >= 300) throw new ApiError(`download ${fileId}`, r);
    return r.text;
  };

  return {
    async create(chunk, items, meta, fileId, noteFile) {
      let file = fileId;
      if (!file) {
        const form = new FormData();
        form.append("purpose", "batch");
        form.append("file", new Blob([`${items.map(inputLine).join("\n")}\n`], { type: "application/jsonl" }), `${meta.slotgate_chunk ?? "batch"}.jsonl`);
        const up = await call(a.ctx, "POST", `${a.base}/v1/files`, { headers: a.headers("/v1/files"), body: form });
        if (up.status >= 300 || !isObj(up.json) || typeof up.json.id !== "string") return refusal(up);
        file = up.json.id;
        noteFile(file);
      }
      const body = JSON.stringify({ input_file_id: file, endpoint: chunk.url, completion_window: "24h", metadata: meta });
      const r = await call(a.ctx, "POST", `${a.base}/v1/batches`, { headers: json("/v1/batches"), body, keep429: true, once: true });
      if (r.status >= 300 || !isObj(r.json)) return refusal(r);
      return { kind: "created", view: viewOf(r.json) };
    },
    get: (id) => batch(`batch ${id}`, "GET", `/v1/batches/${encodeURIComponent(id)}`),
    cancel: (id) => batch(`cancel ${id}`, "POST", `/v1/batches/${encodeURIComponent(id)}/cancel`),
    async answers(view) {
      const out = new Map<string, OutputLine>();
      if (!view.output) return out;
      for (const raw of (await text(view.output)).split("\n")) {
        if (raw.trim() === "") continue;
        let l: OutputLine;
        try {
          l = JSON.parse(raw) as OutputLine;
        } catch {
          continue;
        }
        const code = l.response?.status_code ?? 0;
        // Only answers: a failed line (it is in the error file anyway) runs synchronously.
        if (typeof l.custom_id === "string" && l.error === null && code >= 200 && code < 300) out.set(l.custom_id, l);
      }
      return out;
    },
    recent: (since) => listSince(a, (after) => `/v1/batches?limit=100${after ? `&after=${encodeURIComponent(after)}` : ""}`, viewOf, since),
  };
}
