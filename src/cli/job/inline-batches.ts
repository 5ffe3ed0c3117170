// A batch API whose requests go inline (Anthropic's Message Batches: providers/lines.ts `input:
// "inline"`): the chunk's requests in the create's body, results as JSONL once it has ended, mapped
// back to the OpenAI output lines the rest of the runner writes.
import { randomUUID } from "node:crypto";
import type { Item } from "../input";
import type { OutputLine } from "../types";
import { type ApiContext, ApiError, type BatchApi, batchCall, type BatchView, isObj, listSince, num, refusal } from "./api";
import { call } from "./http";
import type { PlanEvent } from "./journal";

export function viewOf(b: Record<string, unknown>): BatchView {
  const rc = isObj(b.request_counts) ? b.request_counts : {};
  const failed = num(rc.errored) + num(rc.canceled) + num(rc.expired);
  const status = String(b.processing_status ?? "");
  return {
    id: String(b.id ?? ""), status, ended: status === "ended", refused: null,
    counts: { total: num(rc.processing) + num(rc.succeeded) + failed, done: num(rc.succeeded), failed },
    createdAt: Date.parse(String(b.created_at ?? "")) || 0, metadata: null,
  };
}

/** The id a line goes by in its batch: its own, or its index when the chunk's ids do not all fit the API's pattern. */
const sentId = (chunk: PlanEvent, i: number) => (chunk.indexIds ? `i${i}` : chunk.ids[i]!);

export function inlineBatchApi(a: ApiContext): BatchApi {
  const headers = (url: string) => ({ ...a.headers(url), "content-type": "application/json" });
  const batch = batchCall(a, viewOf);
  const path = (id: string, rest = "") => `/v1/messages/batches/${encodeURIComponent(id)}${rest}`;

  return {
    async create(chunk, items: Item[]) {
      const requests = items.map((it, i) => `{"custom_id":${JSON.stringify(sentId(chunk, i))},"params":${it.payload}}`);
      const url = "/v1/messages/batches";
      const r = await call(a.ctx, "POST", `${a.base}${url}`, { headers: headers(url), body: `{"requests":[${requests.join(",")}]}`, keep429: true, once: true });
      if (r.status >= 300 || !isObj(r.json)) return refusal(r);
      return { kind: "created", view: viewOf(r.json) };
    },
    get: (id) => batch(`message batch ${id}`, "GET", path(id)),
    cancel: (id) => batch(`cancel ${id}`, "POST", path(id, "/cancel")),
    async answers(view, chunk) {
      const url = path(view.id, "/results");
      const r = await call(a.ctx, "GET", `${a.base}${url}`, { headers: a.headers(url) });
      if (r.status >= 300) throw new ApiError(`results of ${view.id}`, r);
      const byId = new Map(chunk.ids.map((id, i) => [sentId(chunk, i), id]));
      const out = new Map<string, OutputLine>();
      for (const raw of r.text.split("\n")) {
        if (raw.trim() === "") continue;
        let l: { custom_id?: unknown; result?: { type?: unknown; message?: unknown } };
        try {
          l = JSON.parse(raw) as typeof l;
        } catch {
          continue;
        }
        const id = byId.get(String(l.custom_id));
        if (id === undefined || l.result?.type !== "succeeded") continue;
        out.set(id, { id: `batch_req_${randomUUID().replace(/-/g, "")}`, custom_id: id, response: { status_code: 200, request_id: null, body: l.result.message }, error: null });
      }
      return out;
    },
    recent: (since) => listSince(a, (after) => `/v1/messages/batches?limit=100${after ? `&after_id=${encodeURIComponent(after)}` : ""}`, viewOf, since),
  };
}
