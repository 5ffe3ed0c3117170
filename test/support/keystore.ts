// The virtual key store as the Worker sees it, watched: every call to an instance is recorded (which
// instance, which method), and a fault makes every call fail as an overloaded object does, or never
// answer. Handed to the app in place of VIRTUAL_KEYS.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { Env } from "../../src/env";
import type { VirtualKeys } from "../../src/keys/object";
import app from "../../src/index";

export interface StoreCall {
  home: string;
  method: string;
}
export type Fault = "overloaded" | "hang" | null;

export function watchedStore(ns: DurableObjectNamespace<VirtualKeys> = env.VIRTUAL_KEYS) {
  const calls: StoreCall[] = [];
  const names = new Map<string, string>();
  const state = { fault: null as Fault };
  const call = (stub: DurableObjectStub<VirtualKeys>, home: string, method: string, args: unknown[]) => {
    calls.push({ home, method });
    if (state.fault === "overloaded") return Promise.reject(Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { overloaded: true, retryable: true }));
    if (state.fault === "hang") return new Promise(() => {});
    return (stub as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
  };
  const watched = {
    idFromName(name: string) {
      const id = ns.idFromName(name);
      names.set(id.toString(), name);
      return id;
    },
    get(id: DurableObjectId) {
      const stub = ns.get(id);
      const home = names.get(id.toString()) ?? id.toString();
      return new Proxy({}, { get: (_, method) => (typeof method === "string" && method !== "then" ? (...args: unknown[]) => call(stub, home, method, args) : undefined) });
    },
  } as unknown as DurableObjectNamespace<VirtualKeys>;
  return { ns: watched, calls, state };
}

/** The app with VIRTUAL_KEYS replaced (and `vars` over the env), the answer read whole before the request's work is awaited. */
export async function callWith(store: DurableObjectNamespace<VirtualKeys>, path: string, init: RequestInit = {}, vars: Partial<Env> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://gateway${path}`, init), { ...env, ...vars, VIRTUAL_KEYS: store } as Env, ctx);
  const body = await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return new Response(res.status === 204 ? null : body, res);
}
