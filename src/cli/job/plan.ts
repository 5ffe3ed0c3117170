// Which lines go to a provider's batch API, and how they are cut into batches under its limits.
// Pure.
import type { Item } from "../input";
import type { PlanEvent } from "./journal";

export type Api = "openai" | "anthropic";

/** Per batch: the most requests and bytes of input (OpenAI's file, Anthropic's request body). */
export interface Limits {
  lines: number;
  bytes: number;
}

export const PROVIDER_LIMITS: Record<Api, Limits> = {
  openai: { lines: 50_000, bytes: 200 * 1024 * 1024 },
  anthropic: { lines: 100_000, bytes: 256 * 1024 * 1024 },
};

/** Through a gateway a batch's input is one request body: under its MAX_BODY_BYTES (10 MiB by default), with room for the form around it. */
export const GATEWAY_BYTES = 8 * 1024 * 1024;

const OPENAI_URLS = new Set(["/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/responses"]);

/** The batch API a line can go to, or null: its provider has none here, or its endpoint cannot be batched. */
export function apiFor(item: Pick<Item, "provider" | "url">): Api | null {
  if (item.provider === "openai" && OPENAI_URLS.has(item.url)) return "openai";
  if (item.provider === "anthropic" && item.url === "/v1/messages") return "anthropic";
  return null;
}

/** Anthropic's custom_id pattern; a chunk with any other id sends line indexes instead. */
export const ANTHROPIC_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** The bytes a line takes in its batch's input. */
export function lineBytes(api: Api, item: Item): number {
  // {"custom_id":..., "method":"POST","url":...,"body":...} or {"custom_id":...,"params":...}, plus a separator.
  const id = Buffer.byteLength(JSON.stringify(item.customId));
  return Buffer.byteLength(item.payload) + id + (api === "openai" ? Buffer.byteLength(item.url) + 48 : 28);
}

/**
 * Cuts `items` into batches: one per provider, endpoint and model for OpenAI (a batch holds one
 * model), one per provider for Anthropic, each under `limits` (a line larger than a whole batch
 * goes alone; the provider's answer then decides). Chunks are named c<first>, c<first+1>, ... in
 * the order their first line comes.
 */
export function planChunks(items: Iterable<Item>, limits: (api: Api) => Limits, first: number): PlanEvent[] {
  const open = new Map<string, { plan: PlanEvent; bytes: number }>();
  const out: PlanEvent[] = [];
  let n = first;
  for (const item of items) {
    const api = apiFor(item);
    if (!api) continue;
    const group = api === "openai" ? `${item.provider}\n${item.url}\n${item.model}` : item.provider;
    const size = lineBytes(api, item);
    const lim = limits(api);
    let cur = open.get(group);
    if (!cur || cur.plan.ids.length >= lim.lines || (cur.plan.ids.length > 0 && cur.bytes + size > lim.bytes)) {
      cur = { plan: { e: "plan", chunk: `c${n++}`, api, provider: item.provider, url: item.url, model: api === "openai" ? item.model : "*", ids: [] }, bytes: 0 };
      open.set(group, cur);
      out.push(cur.plan);
    }
    cur.plan.ids.push(item.customId);
    cur.bytes += size;
  }
  for (const p of out) if (p.api === "anthropic" && !p.ids.every((id) => ANTHROPIC_ID.test(id))) p.indexIds = true;
  return out;
}
