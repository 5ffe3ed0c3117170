// A newcomer's first hour, as the README tells it, with nothing but what the demo and the docs print:
// `npm run demo` (no provider key), the OpenAI SDK with only its base URL changed (its models list
// too), every command the demo prints run as printed (curl, a virtual key, the batch command from
// another folder with no key in the environment), the README's batch lines killed mid-run and
// resumed by its --resume line, the deploy guide's smoke test against the demo, a provider that
// cannot be reached, and the dashboard in a real browser (Debian's chromium through playwright-core;
// without it this FAILS, as test/e2e/dashboard.test.ts does).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import OpenAI from "openai";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../support/gateway.ts";
import { spawnOwned, stopGroup } from "../support/owned.ts";
import { stamped, until } from "./setup.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let demo: ChildProcess;
let out = "";
let url = "";
let token = "";
let standinUrl = "";
let own = "";
let browser: Browser | undefined;
const scratch = mkdtempSync(join(tmpdir(), "slotgate-dayone-"));
/** A newcomer's environment: no provider key of any kind. */
const newcomer = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.endsWith("_API_KEY") && k !== "SLOTGATE_TOKEN"));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`chromium not found at ${CHROMIUM}: sudo apt-get install -y chromium (or set CHROMIUM_PATH)`);
  // As the README says, through npm; owned (support/owned.ts), so it ends with this test run however that ends.
  demo = spawnOwned("npm", ["run", "demo", "--", "--port", String(await freePort())], {
    cwd: ROOT, env: { ...newcomer, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" },
  });
  demo.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  demo.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  await until("the demo's banner", () => out.includes("Ctrl-C stops") || demo.exitCode !== null, 90_000);
  expect(demo.exitCode, out).toBeNull();
  url = /dashboard\s+(http:\/\/127\.0\.0\.1:\d+)\/admin\s+admin token: (\S+)/.exec(out)?.[1] ?? "";
  token = /admin token: (\S+)/.exec(out)?.[1] ?? "";
  standinUrl = /a local stand-in \((http:\/\/127\.0\.0\.1:\d+)\)/.exec(out)?.[1] ?? "";
  expect(url, out).not.toBe("");
  expect(standinUrl, out).not.toBe("");
});

afterAll(async () => {
  await browser?.close();
  if (demo) await stopGroup(demo);
  rmSync(scratch, { recursive: true, force: true });
});

const admin = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
};

/** The command the demo printed after `label`, with its continuation lines, as a shell reads it. */
function printed(label: string): string {
  const lines = out.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`  ${label} `));
  expect(at, `the demo printed no ${label} line:\n${out}`).toBeGreaterThan(-1);
  const command = [lines[at]!.slice(label.length + 2).trim()];
  for (let i = at; lines[i]!.trimEnd().endsWith("\\"); i++) command.push(lines[i + 1]!.trim());
  return command.join("\n");
}

interface Ran {
  code: number | null;
  /** Its standard output. */
  said: string;
  /** Its standard error (curl's progress meter, the CLI's progress and hints). */
  told: string;
}

/** Runs a command line in sh (a process group of its own), in `cwd`, with `env`; resolves with its exit code and what it printed. */
function sh(line: string, cwd: string, env: NodeJS.ProcessEnv = newcomer): Promise<Ran> & { child: ChildProcess } {
  const child = spawn("sh", ["-c", line], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let said = "";
  let told = "";
  child.stdout!.on("data", (b: Buffer) => (said += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (told += b.toString()));
  const done = new Promise<Ran>((ok) => child.once("close", (code) => ok({ code, said, told })));
  return Object.assign(done, { child });
}

const folder = (name: string) => {
  const dir = join(scratch, name);
  mkdirSync(dir);
  return dir;
};

it("the OpenAI SDK with only its base URL changed and any key: a chat answer, and its models list", async () => {
  const sdk = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: "sk-newcomer", maxRetries: 0 });
  const { data, response } = await sdk.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
  expect(data.choices[0]?.message.content).toMatch(/\w/);
  own = stamped(response as unknown as Response, "openai", "gpt-4o-mini").key;
  const models = [];
  for await (const m of sdk.models.list()) models.push(m.id);
  expect(models).toContain("gpt-4o-mini");
});

it("the demo's curl lines as printed: a chat answer, and a virtual key the SDK then uses alone", async () => {
  const chat = await sh(printed("curl"), folder("curl"));
  expect(chat.code, chat.told).toBe(0);
  expect(chat.said).toMatch(/^HTTP\/1\.1 200 /m);
  expect(chat.said).toMatch(/^x-slotgate-key: openai:gpt-4o-mini:/m);

  const minted = await sh(printed("virtual key"), folder("vk"));
  expect(minted.code, minted.told).toBe(0);
  const vk = JSON.parse(minted.said) as { key: string; pool: string };
  expect(vk).toMatchObject({ key: expect.stringMatching(/^sgk-/), pool: "demo" });
  const pooled = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: vk.key, maxRetries: 0 });
  expect((await pooled.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).choices).toHaveLength(1);
});

it("the demo's batch command as printed, from a folder outside the clone with no key in the environment", async () => {
  const dir = folder("batch");
  const run = await sh(printed("batch"), dir);
  expect(run.code, run.told).toBe(0);
  expect(readdirSync(dir)).toEqual(["results.jsonl"]);
  const results = readFileSync(join(dir, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } });
  expect(results.map((r) => [r.custom_id, r.response.status_code]).sort()).toEqual([["q1", 200], ["q2", 200], ["q3", 200]]);
});

it("the README's batch lines, the key exported: killed mid-run, then its --resume line as printed; every line once", async () => {
  // The README's block, its placeholders filled in: a key, and the demo's address for the local gateway's.
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /### The batch runner[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines = block.split("\n").map((l) => l.replace(/\s+#.*$/, "").replaceAll("sk-...", "sk-readme-key").replaceAll("http://127.0.0.1:8787", url));
  const exported = lines.find((l) => l.startsWith("export OPENAI_API_KEY="));
  const [first, resume] = lines.filter((l) => l.startsWith("slotgate batch") && l.includes("--gateway"));
  expect([exported, first, resume], block).not.toContain(undefined);
  expect(resume).toBe(`${first} --resume`);
  // `slotgate` on the PATH as `npm link` puts it: a link to bin/slotgate.mjs.
  const bin = folder("bin");
  symlinkSync(join(ROOT, "bin/slotgate.mjs"), join(bin, "slotgate"));
  const env = { ...newcomer, PATH: `${bin}${delimiter}${newcomer.PATH}` };
  const dir = folder("readme");
  const ids = ["r1", "r2", "r3", "r4"];
  writeFileSync(join(dir, "requests.jsonl"), ids.map((id) => JSON.stringify({ custom_id: id, method: "POST", url: "/v1/chat/completions", body: { model: "gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content: id }] } })).join("\n") + "\n");

  // The provider holds every request (the stand-in's control route), so the run is mid-way when it dies.
  const hold = (on: boolean) => fetch(`${standinUrl}/_config`, { method: "POST", body: JSON.stringify({ hold: on }) });
  await hold(true);
  try {
    const crashed = sh(`${exported}\n${first}`, dir, env);
    await expect.poll(async () => ((await (await fetch(`${standinUrl}/_stats`)).json()) as { held: number }).held, { timeout: 30_000 }).toBeGreaterThan(0);
    process.kill(-crashed.child.pid!, "SIGKILL");
    expect((await crashed).code).toBeNull();
  } finally {
    await hold(false);
  }
  const resumed = await sh(`${exported}\n${resume}`, dir, env);
  expect(resumed.code, resumed.told).toBe(0);
  const results = readFileSync(join(dir, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } });
  expect(results.map((r) => r.custom_id).sort()).toEqual(ids);
  expect(results.every((r) => r.response.status_code === 200)).toBe(true);
});

it("the deploy guide's smoke test, against the demo: healthz, a 401 with no key, and the models list through the gateway", async () => {
  const guide = readFileSync(join(ROOT, "docs/deploying.md"), "utf8");
  const block = /```sh\n(GATEWAY=https:\/\/slotgate\.[\s\S]*?)```/.exec(guide)?.[1] ?? "";
  expect(block).toContain("/openai/v1/models");
  const lines = block.replace(/^GATEWAY=.*$/m, `GATEWAY=${url}`);
  const smoke = await sh(lines, folder("smoke"), { ...newcomer, OPENAI_API_KEY: "sk-smoke", GATEWAY_TOKEN: "no-token-needed-here" });
  expect(smoke.code, smoke.told).toBe(0);
  const said = smoke.said.split("\n");
  expect(said[0]).toBe('{"ok":true}');
  expect(said[1]).toMatch(/^HTTP\/1\.1 401 /);
  expect(said[2]).toMatch(/^\{"object":"list","data":\[\{"id":"/);
});

it("a provider that cannot be reached: the 502 says which host and why, and each attempt is counted", async () => {
  const host = `slotgate-dayone-${Date.now()}.openai.azure.com`;
  const gone = await fetch(`${url}/azure/${host.split(".")[0]}/openai/deployments/d/chat/completions?api-version=2024-10-21`, {
    method: "POST", headers: { "api-key": "az-key", "content-type": "application/json", "x-slotgate-max-attempts": "3" }, body: "{}",
  });
  expect(gone.status).toBe(502);
  const why = ((await gone.json()) as { error: { message: string } }).error.message;
  expect(why).toMatch(new RegExp(`^the provider at ${host.replace(/\./g, "\\.")} could not be reached \\(3 attempts\\): the host name did not resolve, or the TLS handshake failed`));
  expect(why).not.toContain("az-key");
  await expect.poll(async () => (await admin<{ providers: { provider: string; counts: Record<string, number> }[] }>("/admin/upstream")).providers.find((p) => p.provider === "azure")?.counts.unreachable, { timeout: 10_000 }).toBe(3);
});

it("the dashboard with the token the demo printed: each key's user as the admin API names it, quotas learned, the unreachable attempts", async () => {
  // The newcomer's own key, used again just now with no caller label: the admin API names its default caller.
  const sdk = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: "sk-newcomer", maxRetries: 0 });
  await sdk.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "again" }] });
  const listed = await admin<{ keys: { key: string; caller: string | null }[] }>("/admin/keys");
  expect(listed.keys.find((k) => k.key === own)?.caller).toBe("(default)");

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${url}/admin`);
  await page.locator("#token").fill(token);
  await page.locator("#login button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible" });
  const mine = page.locator(`#keys tbody tr[title="${own}"]`);
  await mine.waitFor({ state: "visible" });
  expect(await mine.locator("td.by").textContent()).toBe("(default)");
  // A minute later the API names nobody (its callers of the last minute are gone): played here by
  // answering the page's next key lists without the caller. The row keeps the name, marked earlier.
  await page.route("**/admin/keys", async (route) => {
    const res = await route.fetch();
    const body = (await res.json()) as { keys: { key: string; caller: string | null }[] };
    for (const k of body.keys) if (k.key === own) k.caller = null;
    await route.fulfill({ response: res, json: body });
  });
  const earlier = mine.locator("td.by span.earlier");
  await earlier.waitFor({ state: "visible", timeout: 10_000 });
  expect(await earlier.textContent()).toBe("(default)");
  expect(await earlier.getAttribute("title")).toBe("nobody in the last minute; earlier: (default)");
  await page.unroute("**/admin/keys");
  // The pool's members, each row told apart.
  const byWho = page.locator("#keys tbody td.by");
  await expect.poll(async () => (await byWho.allTextContents()).filter((t) => t.startsWith("demo / ")).length).toBeGreaterThan(0);
  // The stand-in's quotas, as learned from its headers: 120 requests a minute.
  await mine.click();
  await expect.poll(() => page.locator("#d-quotas").textContent()).toMatch(/requests left[\d,]+ \/ 120/);
  // The unreachable attempts, by provider.
  const azure = page.locator("#upstream tbody tr").filter({ has: page.locator("td", { hasText: /^azure$/ }) });
  await expect.poll(async () => (await azure.locator("td").allTextContents())[5]).toBe("3");
  expect(problems).toEqual([]);
});
