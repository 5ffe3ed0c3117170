// What a test starts ends with the test run, however the run ends (test/support/owned.ts and
// supervise.ts): a process that started a group is killed (as Ctrl-C or SIGTERM on `npm test` kill
// vitest's workers, or SIGKILL), and everything in the group, a real `wrangler dev` and its workerd
// included, is gone within seconds. And a test's gateway takes no configuration from the clone's
// own `.dev.vars`.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { linkedClone } from "../support/clone.ts";
import { startGateway } from "../support/gateway.ts";
import { groupMembers } from "../support/owned.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const OWNED = join(ROOT, "test/support/owned.ts");
const GATEWAY = join(ROOT, "test/support/gateway.ts");
const started: ChildProcess[] = [];
const scratch = mkdtempSync(join(tmpdir(), "slotgate-supervise-"));
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
});

/** A Node process (the test run's stand-in) running `script` (ESM, .ts imports allowed); resolves with the first line it prints. */
async function starter(script: string): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  started.push(child);
  let out = "";
  let err = "";
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const line = await new Promise<string>((ok, fail) => {
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      if (out.includes("\n")) ok(out.split("\n")[0]!);
    });
    child.once("exit", (code) => fail(new Error(`the starter exited (${code}) before it printed: ${err}`)));
  });
  return { child, line };
}

async function gone(pgid: number, timeoutMs = 15_000): Promise<number[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = groupMembers(pgid);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a group a test started ends with the process that started it", () => {
  for (const signal of ["SIGKILL", "SIGTERM", "SIGINT"] as const) {
    it(`${signal} to the starter: the command and what it started are gone`, async () => {
      // A command that starts a process of its own, as wrangler starts workerd.
      const { child, line } = await starter(
        `import { spawnOwned } from ${JSON.stringify(OWNED)}; const c = spawnOwned("sh", ["-c", "sleep 300 & sleep 300"]); console.log(c.pid); setInterval(() => {}, 1000);`,
      );
      const pgid = Number(line);
      await expect.poll(() => groupMembers(pgid).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3); // supervisor, sh, two sleeps
      child.kill(signal);
      expect(await gone(pgid)).toEqual([]);
    });
  }

  it("a real gateway (wrangler dev and workerd) stops answering and leaves nothing once its starter is SIGKILLed", async () => {
    const { child, line } = await starter(
      `import { startGateway } from ${JSON.stringify(GATEWAY)}; const g = await startGateway(); console.log(JSON.stringify({ url: g.url, pgid: g.group() }));`,
    );
    const { url, pgid } = JSON.parse(line) as { url: string; pgid: number };
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(groupMembers(pgid).length).toBeGreaterThan(1);
    child.kill("SIGKILL");
    expect(await gone(pgid)).toEqual([]);
    await expect(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  });
});

describe("a test's gateway owns its configuration", () => {
  it("takes nothing from the clone's .dev.vars: an admin token there does not open the admin routes, the one given does", async () => {
    // A clone with a developer's .dev.vars, beside the same files.
    const clone = linkedClone(scratch);
    writeFileSync(join(clone, ".dev.vars"), "ADMIN_TOKEN=from-dev-vars\nGATEWAY_TOKENS=from-dev-vars\n");
    const g = await startGateway({ root: clone, vars: { ADMIN_TOKEN: "given-admin-token" } });
    try {
      const asked = (token: string) => fetch(`${g.url}/admin/keys`, { headers: { authorization: `Bearer ${token}` } });
      expect((await asked("given-admin-token")).status).toBe(200);
      expect((await asked("from-dev-vars")).status).toBe(401);
      // No gateway token was given, so a caller needs none: GATEWAY_TOKENS would answer 401 before anything else.
      const call = await fetch(`${g.url}/nonesuch/v1/models`);
      expect(call.status).toBe(404);
      expect(((await call.json()) as { error: { type: string } }).error.type).toBe("unknown_provider");
    } finally {
      await g.close();
    }
  });
});
