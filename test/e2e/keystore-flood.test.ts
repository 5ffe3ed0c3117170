// Issue 26, attack 6, through `wrangler dev`: a flood of random `sgk-` keys (no gateway token needed)
// while a real virtual key's requests go on. Forged keys are refused by their tag, keys of the old
// shape by what the gateway knows of its old store, so none reaches a store: every one is a 401
// that says why, nothing is a 500, and the real key is served throughout.
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { randomLegacy, randomTagged } from "../support/forged.ts";
import { Admin, poolVars } from "../support/pools.ts";
import { ADMIN_TOKEN, OPENAI_MODEL, prompt, useStack } from "./setup.ts";

const MEMBER_KEY = `sk-flood-member-${randomBytes(8).toString("hex")}`;
const FLOOD = 2_000;
const stack = useStack({
  admin: true,
  standin: { latencyMs: 20, echo: true },
  vars: poolVars({ main: { provider: "openai", members: [{ name: "only", secret: "MEMBER_KEY" }] } }, { MEMBER_KEY }),
});

interface Answer {
  status: number;
  type: string | null;
  message: string;
}

async function send(key: string, text = "flood"): Promise<Answer> {
  try {
    const res = await fetch(`${stack.gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: OPENAI_MODEL, max_tokens: 16, messages: [{ role: "user", content: prompt(text) }] }),
    });
    const body = await res.text();
    return { status: res.status, type: res.headers.get("x-slotgate-error"), message: res.status === 200 ? body : ((JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body) };
  } catch (err) {
    return { status: 0, type: null, message: String(err) };
  }
}

it(`${FLOOD} random sgk- keys at once: each a 401 without a store call, no 500, and a real key's requests all served`, async () => {
  const real = await new Admin(stack.gateway.url, ADMIN_TOKEN).mint("real-under-flood", "main");
  // One old-shape key first: the gateway finds its old store empty, and refuses that shape itself from then on.
  expect((await send(randomLegacy())).status).toBe(401);
  const before = stack.standin.stats().attempts;

  let flooding = true;
  const served: Answer[] = [];
  const steady = (async () => {
    for (let i = 0; flooding || i < 10; i++) served.push(await send(real.key, `steady ${i}`));
  })();
  const forged = Array.from({ length: FLOOD }, (_, i) => (i % 2 ? randomTagged() : randomLegacy()));
  const answers = await Promise.all(forged.map((key) => send(key)));
  flooding = false;
  await steady;

  expect(answers.filter((a) => a.status !== 401), "every forged key: 401").toEqual([]);
  expect(answers.every((a) => a.type === "unauthorized")).toBe(true);
  // Why each was refused: the tag, or the old shape with none left; neither answer needs a store.
  answers.forEach((a, i) => expect(a.message).toMatch(i % 2 ? /not a virtual key this gateway minted/ : /no keys of this older format/));
  expect(served.filter((a) => a.status !== 200), "the real key under flood").toEqual([]);
  served.forEach((a, i) => expect(a.message).toContain(prompt(`steady ${i}`)));
  expect(stack.standin.stats().attempts - before, "only the real key's requests went upstream").toBe(served.length);
});
