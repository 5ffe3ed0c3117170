// Calls the app with a modified environment, as a deployment with other vars would.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import app from "../../src/index";
import type { Env } from "../../src/env";

/** The answer read whole, then the request's waitUntil work (slot release, cache store) waited for. */
export async function callWith(path: string, init: RequestInit, vars: Partial<Env> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://gateway${path}`, init), { ...env, ...vars }, ctx);
  // Read the body before waiting: the slot is released by a waitUntil that ends with the stream.
  const body = await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return new Response(body, res);
}
