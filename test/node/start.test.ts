// `npm start` (scripts/start.mjs, start-hints.mjs): what its local secrets leave off is said once the
// gateway answers, with a command that turns it on; run as printed, that command does.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { startHints } from "../../scripts/start-hints.mjs";
import { linkedClone } from "../support/clone.ts";
import { freePort } from "../support/gateway.ts";
import { spawnOwned, stopGroup } from "../support/owned.ts";

const scratch = mkdtempSync(join(tmpdir(), "slotgate-start-"));
const running: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((c) => stopGroup(c)));
  rmSync(scratch, { recursive: true, force: true });
});

describe("start-up hints", () => {
  const where = { port: 8787, file: ".dev.vars" };

  it("no admin token and no virtual key secret: both off, each with the line that turns it on", () => {
    const lines = startHints({}, where);
    expect(lines[0]).toMatch(/^slotgate: the admin API and the dashboard are off: no ADMIN_TOKEN in \.dev\.vars/);
    expect(lines[1]).toBe(`  printf 'ADMIN_TOKEN=%s\\n' "$(openssl rand -hex 32)" >> .dev.vars`);
    expect(lines[2]).toMatch(/^slotgate: virtual keys are off: no VIRTUAL_KEY_SECRET in \.dev\.vars, so minting or using one answers 500 config_error/);
    expect(lines[3]).toBe(`  printf 'VIRTUAL_KEY_SECRET=%s\\n' "$(openssl rand -hex 32)" >> .dev.vars`);
    expect(startHints({ ADMIN_TOKEN: "", VIRTUAL_KEY_SECRET: "" }, where)).toEqual(lines);
  });

  it("both set: where the dashboard is, nothing off; the secret equal to the token is off", () => {
    expect(startHints({ ADMIN_TOKEN: "a", VIRTUAL_KEY_SECRET: "b" }, where)).toEqual(["slotgate: the dashboard is on http://127.0.0.1:8787/admin (its token: ADMIN_TOKEN in .dev.vars)"]);
    const same = startHints({ ADMIN_TOKEN: "a", VIRTUAL_KEY_SECRET: "a" }, { port: 9000, file: ".env" });
    expect(same[0]).toContain("http://127.0.0.1:9000/admin");
    expect(same[1]).toMatch(/^slotgate: virtual keys are off: VIRTUAL_KEY_SECRET is ADMIN_TOKEN's value .* in \.env/);
  });
});

/** `node scripts/start.mjs` in `clone` as `npm start` runs it; resolves with what it printed once the hints are out. */
async function start(clone: string): Promise<{ url: string; said: () => string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawnOwned(process.execPath, ["scripts/start.mjs", "--port", String(port), "--inspector-port", String(await freePort()), "--persist-to", join(clone, ".state"), "--show-interactive-dev-session=false"], {
    cwd: clone, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1", CI: "true" },
  });
  running.push(child);
  let out = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  await expect.poll(() => out, { timeout: 60_000, interval: 200 }).toMatch(/slotgate: the (admin API|dashboard)/);
  return { url: `http://127.0.0.1:${port}`, said: () => out, child };
}

describe("npm start", () => {
  it("with no .dev.vars says admin and virtual keys are off and how to turn them on; /admin says so; the printed commands turn them on", async () => {
    const clone = linkedClone(scratch);
    const first = await start(clone);
    const hints = first.said().slice(first.said().indexOf("slotgate: the admin API"));
    expect(hints).toContain("virtual keys are off");
    const off = await fetch(`${first.url}/admin/keys`);
    expect(off.status).toBe(404);
    expect(((await off.json()) as { error: { message: string } }).error.message).toMatch(/^admin routes are not enabled: .*ADMIN_TOKEN/);

    // Each printed command, run as printed in the clone, then start again.
    const commands = hints.split("\n").filter((l) => l.startsWith("  printf")).map((l) => l.trim());
    expect(commands).toHaveLength(2);
    for (const c of commands) expect(spawnSync("sh", ["-c", c], { cwd: clone }).status).toBe(0);
    await stopGroup(first.child);
    const again = await start(clone);
    expect(again.said()).toContain(`slotgate: the dashboard is on ${again.url}/admin (its token: ADMIN_TOKEN in .dev.vars)`);
    expect(again.said()).not.toContain("are off");
    const token = /ADMIN_TOKEN=([0-9a-f]{64})/.exec(spawnSync("cat", [".dev.vars"], { cwd: clone, encoding: "utf8" }).stdout)?.[1];
    expect((await fetch(`${again.url}/admin/keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});
