import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { json, mockUpstream, CHAT, chat } from "../support/upstream";
afterEach(() => vi.restoreAllMocks());
const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(3000) });
describe("probe", () => {
  it("claude rawPredict", async () => {
    const { calls } = mockUpstream((req) => { console.log("UP", req.url); return json({ id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text: "hi" }], model: "claude-sonnet-4-5", stop_reason: "end_turn", usage: { input_tokens: 10, output_tokens: 3 } }); });
    const o = await chat();
    console.log("OPENAI", o.status);
    for (const loc of ["us-east5", "global", "us", "eu"]) {
      try {
      const res = await post(`/vertex/v1/projects/my-proj-1/locations/${loc}/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict`, { authorization: "Bearer ya29.tok" }, { anthropic_version: "vertex-2023-10-16", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
      console.log("LOC", loc, res.status, res.headers.get("x-slotgate-key"), await res.text(), calls.at(-1)?.url);
      } catch (e) { console.log("LOC", loc, "ERR", String(e)); }
    }
  }, 30000);
});
