// The pool and virtual-key admin API (issue 19), as end-to-end tests and the benchmark call it,
// and a scan of wrangler's storage directory for strings that must never be stored.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface PoolMember {
  name: string;
  /** The Worker secret (a var under wrangler dev) that holds the member's provider key. */
  secret: string;
  provider?: string;
  /** Azure: the resource, or a base URL instead (tests: the stand-in), and model -> deployment. */
  resource?: string;
  baseUrl?: string;
  deployments?: Record<string, string>;
  apiVersion?: string;
}

export type Pools = Record<string, { provider: string; members: PoolMember[] }>;

export interface MintedKey {
  name: string;
  key: string;
  pool: string;
  createdAt: string;
}

export interface ListedKey {
  name: string;
  pool: string;
  lane: string | null;
  maxConcurrency: number | null;
  createdAt: string;
  lastUsed: string | null;
}

export interface MemberState {
  name: string;
  provider: string;
  keys: string[];
  state: "in" | "out";
  until: string | null;
  reason: string | null;
  limit: number;
  inFlight: number;
  queued: number;
  ratePerMin: number | null;
  served: number;
  share: number;
}

export interface PoolState {
  name: string;
  provider: string;
  members: MemberState[];
}

/** The gateway's vars for a set of pools: POOLS, and each member's secret with its value. */
export function poolVars(pools: Pools, secrets: Record<string, string>): Record<string, string> {
  return { POOLS: JSON.stringify(pools), ...secrets };
}

export class Admin {
  readonly url: string;
  readonly token: string;

  constructor(url: string, token: string) {
    this.url = url;
    this.token = token;
  }

  fetch(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** POST /admin/virtual-keys; throws unless 201. */
  async mint(name: string, pool: string, extra: { lane?: string; maxConcurrency?: number } = {}): Promise<MintedKey> {
    const res = await this.fetch("POST", "/admin/virtual-keys", { name, pool, ...extra });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`minting ${name} for ${pool}: ${res.status} ${text}`);
    return JSON.parse(text) as MintedKey;
  }

  /** GET /admin/virtual-keys: the list, and the answer's text (to scan for key material). */
  async list(): Promise<{ keys: ListedKey[]; text: string }> {
    const res = await this.fetch("GET", "/admin/virtual-keys");
    const text = await res.text();
    if (res.status !== 200) throw new Error(`listing virtual keys: ${res.status} ${text}`);
    return { keys: listIn(JSON.parse(text)) as ListedKey[], text };
  }

  async revoke(name: string): Promise<Response> {
    return this.fetch("DELETE", `/admin/virtual-keys/${encodeURIComponent(name)}`);
  }

  /** GET /admin/pools. */
  async pools(): Promise<{ pools: PoolState[]; text: string }> {
    const res = await this.fetch("GET", "/admin/pools");
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /admin/pools: ${res.status} ${text}`);
    return { pools: (JSON.parse(text) as { pools: PoolState[] }).pools, text };
  }

  async member(pool: string, member: string): Promise<MemberState> {
    const found = (await this.pools()).pools.find((p) => p.name === pool)?.members.find((m) => m.name === member);
    if (!found) throw new Error(`GET /admin/pools lists no member ${member} in ${pool}`);
    return found;
  }
}

/** The issue names the list's fields, not the wrapper: `{"virtualKeys":[...]}`, `{"keys":[...]}` or a bare array. */
function listIn(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  const arrays = Object.values(body as object).filter(Array.isArray);
  if (arrays.length !== 1) throw new Error(`GET /admin/virtual-keys: expected one list in ${JSON.stringify(body).slice(0, 200)}`);
  return arrays[0]!;
}

/** Files under `dir` (recursively) whose bytes contain `needle`, as paths relative to it. */
export function filesContaining(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && readFileSync(p).includes(needle)) out.push(p.slice(dir.length + 1));
    }
  };
  walk(dir);
  return out;
}
