// A pool whose member's secret is not set (issue 19): `wrangler dev` with POOLS naming a secret
// that no var holds, beside a pool whose secret is set. Its own gateway, so the other pool tests
// never run under a configuration error.
import { expect, it } from "vitest";
import { Admin, type MintedKey, poolVars } from "../support/pools.ts";
import { ADMIN_TOKEN, OPENAI_MODEL, useStack } from "./setup.ts";

const REAL_KEY = "sk-pool-config-real-5f0c2a9e71b4";
const stack = useStack({
  admin: true,
  vars: poolVars({
    ghost: { provider: "openai", members: [{ name: "ghost-member", secret: "GHOST_KEY_NOT_SET" }] },
    real: { provider: "openai", members: [{ name: "real-member", secret: "REAL_KEY" }] },
  }, { REAL_KEY }),
});

it("a missing secret gets 500 config_error naming the secret, never a value, and nothing is sent", async () => {
  const res = await new Admin(stack.gateway.url, ADMIN_TOKEN).fetch("POST", "/admin/virtual-keys", { name: "ghostly", pool: "ghost" });
  const body = await res.text();
  // Where the gateway notices is not in the contract: at minting, or on the first request.
  let problem = { status: res.status, body, headers: [...res.headers].flat().join("\n") };
  if (res.status === 201) {
    const vk = JSON.parse(body) as MintedKey;
    const r = await fetch(`${stack.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${vk.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: OPENAI_MODEL, max_tokens: 16, messages: [{ role: "user", content: "ghost" }] }),
    });
    problem = { status: r.status, body: await r.text(), headers: [...r.headers].flat().join("\n") };
    expect(r.headers.get("x-slotgate-error")).toBe("config_error");
  }
  expect(problem.status).toBe(500);
  expect(JSON.parse(problem.body)).toMatchObject({ error: { type: "config_error", message: expect.stringContaining("GHOST_KEY_NOT_SET") } });
  expect(`${problem.headers}\n${problem.body}`).not.toContain(REAL_KEY);
  expect(stack.standin.stats().attempts).toBe(0);
});
