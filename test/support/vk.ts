// Virtual keys in the workers tests: minting one per test (storage is shared within a file) and
// calling the Worker with it the way each SDK puts a key.
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";

export const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
export const KEY_A = env.POOL_KEY_A as string;
export const KEY_B = env.POOL_KEY_B as string;

export const admin = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://gateway${path}`, { ...init, headers: { ...ADMIN, ...init.headers } });

export interface Minted {
  name: string;
  key: string;
  pool: string;
  createdAt: string;
  scopes: string[];
}

let n = 0;
/** A key with a name no other test uses. */
export async function mint(pool: string, extra: Record<string, unknown> = {}): Promise<Minted> {
  const name = `vk-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name, pool, ...extra }) });
  expect(res.status).toBe(201);
  return res.json();
}

export interface Call {
  method?: string;
  path?: string;
  model?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** An OpenAI-style call holding only the virtual key. */
export function call(key: string, o: Call = {}): Promise<Response> {
  const method = o.method ?? "POST";
  const body = method === "GET" || method === "DELETE" ? undefined : JSON.stringify(o.body ?? { model: o.model ?? "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16 });
  return exports.default.fetch(`http://gateway${o.path ?? "/openai/v1/chat/completions"}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...o.headers },
    body,
    signal: o.signal,
  });
}

/** Which member of `duo` a forwarded request went to. */
export const memberOf = (h: Headers) => (h.get("authorization") === `Bearer ${KEY_A}` ? "a" : h.get("authorization") === `Bearer ${KEY_B}` ? "b" : "?");

export const errorOf = async (res: Response) => ((await res.json()) as { error: { type: string; message: string } }).error;
