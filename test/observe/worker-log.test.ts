import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { logGatewayError } from "../../src/observe/worker-log";
import { chat, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

function capture() {
  const lines: string[] = [];
  for (const m of ["log", "warn", "error", "debug"] as const) vi.spyOn(console, m).mockImplementation((l: string) => void lines.push(l));
  return lines;
}
const res = (type: string | null, status = 503) =>
  new Response(null, { status, headers: type ? { "x-slotgate-error": type, "x-slotgate-attempts": "2" } : {} });

describe("gateway:error lines from the Worker", () => {
  it("only for limiter_unavailable and upstream_unreachable, with the key, status and attempts", async () => {
    const lines = capture();
    for (const t of ["queue_timeout", "invalid_request", null]) await logGatewayError(env, "openai:m:00000000000000aa", res(t, 400));
    await logGatewayError(env, "openai:m:00000000000000aa", res("limiter_unavailable"), Date.UTC(2026, 0, 1));
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { event: "gateway:error", level: "warn", at: "2026-01-01T00:00:00.000Z", key: "openai:m:00000000000000aa", type: "limiter_unavailable", status: 503, attempts: 2 },
    ]);
  });

  it("a provider that cannot be reached gives one line for the request, naming the host and why, without the credential or a stack", async () => {
    mockUpstream(() => {
      throw new Error("Network connection lost.");
    });
    const lines = capture();
    const r = await chat({ key: "sk-unreachable-secret", headers: { "x-slotgate-max-attempts": "1" } });
    expect(r.status).toBe(502);
    const mine = lines.filter((l) => l.includes('"gateway:error"')).map((l) => JSON.parse(l));
    expect(mine).toEqual([
      expect.objectContaining({
        type: "upstream_unreachable", status: 502, attempts: 1, key: r.headers.get("x-slotgate-key"),
        message: expect.stringMatching(/^the provider at api\.openai\.com could not be reached \(1 attempt\): the connection was refused or lost/),
      }),
    ]);
    expect(lines.filter((l) => l.includes('"gateway:error"')).every((l) => !l.includes("\n"))).toBe(true);
    expect(lines.join("\n")).not.toContain("sk-unreachable-secret");
  });
});
