import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
it("healthz", async () => {
  const res = await exports.default.fetch("http://x/healthz");
  expect(await res.json()).toEqual({ ok: true });
});
