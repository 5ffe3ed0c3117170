// What a key's provider row says of the key, for its object: the quota its operator states
// (stated.ts) and whether its tokens window leaves prompt-cache reads out (cache-share.ts).
import { DIALECTS } from "../providers/dialects";
import { type StatedQuota, statedFor } from "../providers/quota";
import { providers } from "../providers/registry";
import { readsFree } from "./cache-share";
import type { KeyMeta } from "./types";

export interface RowFacts {
  stated: StatedQuota | null;
  cacheReadsFree: boolean;
}

/**
 * What a key's provider row says of it, read once a life: its stated quota (`PROVIDERS`' quota), and
 * whether its tokens window leaves out prompt-cache reads (the dialect's `cacheReadsFree`). A
 * changed variable is a new version, and new objects. A malformed one states nothing (the Worker
 * refuses its requests with config_error).
 */
export function rowFacts(raw: unknown): (meta: KeyMeta) => RowFacts {
  let memo: { model: string; facts: RowFacts } | undefined;
  return (meta) => {
    if (memo?.model !== meta.model) {
      let stated: StatedQuota | null = null;
      let cacheReadsFree = false;
      try {
        const p = providers(raw)[meta.provider];
        stated = p ? statedFor(p.quota, meta.model, !!DIALECTS[p.dialect].scope?.resource) : null;
        cacheReadsFree = !!p && readsFree(DIALECTS[p.dialect], meta.model);
      } catch {}
      memo = { model: meta.model, facts: { stated, cacheReadsFree } };
    }
    return memo.facts;
  };
}
