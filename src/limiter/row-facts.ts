// What a key's provider row says of the key, for its object: the quota its operator states
// (stated.ts), whether its tokens window leaves prompt-cache reads out (cache-share.ts), and what an
// answer drew where its provider gives back the rest of a request's reservation (quota.ts giveBack).
import { outputRateOf } from "../policy/estimate";
import { DIALECTS } from "../providers/dialects";
import { type StatedQuota, statedFor } from "../providers/quota";
import { providers } from "../providers/registry";
import type { Tokens } from "../usage/tokens";
import { readsFree } from "./cache-share";
import type { KeyMeta } from "./types";

export interface RowFacts {
  stated: StatedQuota | null;
  cacheReadsFree: boolean;
  /** What an answer drew from the key's tokens window, where its provider gives the rest back (the row's `returnsUnused`); else null. */
  drawn: ((t: Tokens) => number) | null;
}

/**
 * What a key's provider row says of it, read once a life: its stated quota (`PROVIDERS`' quota),
 * whether its tokens window leaves out prompt-cache reads (the dialect's `cacheReadsFree`), and what
 * an answer drew where its provider gives back the rest (`returnsUnused`, at its `outputRate`). A
 * changed variable is a new version, and new objects. A malformed one states nothing (the Worker
 * refuses its requests with config_error).
 */
export function rowFacts(raw: unknown): (meta: KeyMeta) => RowFacts {
  let memo: { model: string; facts: RowFacts } | undefined;
  return (meta) => {
    if (memo?.model !== meta.model) {
      let stated: StatedQuota | null = null;
      let cacheReadsFree = false;
      let drawn: RowFacts["drawn"] = null;
      try {
        const p = providers(raw)[meta.provider];
        const d = p && DIALECTS[p.dialect];
        stated = d ? statedFor(p.quota, meta.model, !!d.scope?.resource) : null;
        cacheReadsFree = !!d && readsFree(d, meta.model);
        if (d?.limits.returnsUnused) {
          const rate = outputRateOf(d, meta.model);
          drawn = (t) => t.input - t.cached + t.output * rate;
        }
      } catch {}
      memo = { model: meta.model, facts: { stated, cacheReadsFree, drawn } };
    }
    return memo.facts;
  };
}
