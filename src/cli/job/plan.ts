// Which lines go to a provider's batch API, and how they are cut into batches under its limits,
// as its row says (providers/lines.ts). Pure.
import { type Api, BATCH_API_ROWS, batchApiOf } from "../../providers/lines";
import type { Item } from "../input";
import type { PlanEvent } from "./journal";

/** Per batch: the most requests and bytes of input (a file's, or a create's body). */
export interface Limits {
  lines: number;
  bytes: number;
}

/** Through a gateway a batch's input is one request body: under its MAX_BODY_BYTES (10 MiB by default), with room for the form around it. */
export const GATEWAY_BYTES = 8 * 1024 * 1024;

/** The batch API a line can go to, or null: its provider has none here, or its endpoint cannot be batched. */
export const apiFor = (item: Pick<Item, "provider" | "url">): Api | null => batchApiOf(item.provider, item.url);

/** The bytes a line takes in its batch's input. */
export function lineBytes(api: Api, item: Item): number {
  // {"custom_id":..., "method":"POST","url":...,"body":...} or {"custom_id":...,"params":...}, plus a separator.
  const id = Buffer.byteLength(JSON.stringify(item.customId));
  return Buffer.byteLength(item.payload) + id + (BATCH_API_ROWS[api].input === "file" ? Buffer.byteLength(item.url) + 48 : 28);
}

/**
 * Cuts `items` into batches: one per provider, endpoint and model where the input is a file (a
 * batch holds one model), one per provider where it is inline, each under `limits` (a line larger
 * than a whole batch goes alone; the provider's answer then decides). Chunks are named c<first>,
 * c<first+1>, ... in the order their first line comes.
 */
export function planChunks(items: Iterable<Item>, limits: (api: Api) => Limits, first: number): PlanEvent[] {
  const open = new Map<string, { plan: PlanEvent; bytes: number }>();
  const out: PlanEvent[] = [];
  let n = first;
  for (const item of items) {
    const api = apiFor(item);
    if (!api) continue;
    const oneModel = BATCH_API_ROWS[api].input === "file";
    const group = oneModel ? `${item.provider}\n${item.url}\n${item.model}` : item.provider;
    const size = lineBytes(api, item);
    const lim = limits(api);
    let cur = open.get(group);
    if (!cur || cur.plan.ids.length >= lim.lines || (cur.plan.ids.length > 0 && cur.bytes + size > lim.bytes)) {
      cur = { plan: { e: "plan", chunk: `c${n++}`, api, provider: item.provider, url: item.url, model: oneModel ? item.model : "*", ids: [] }, bytes: 0 };
      open.set(group, cur);
      out.push(cur.plan);
    }
    cur.plan.ids.push(item.customId);
    cur.bytes += size;
  }
  for (const p of out) {
    const ids = BATCH_API_ROWS[p.api].ids;
    if (ids && !p.ids.every((id) => ids.test(id))) p.indexIds = true;
  }
  return out;
}
