// A newcomer's first hour, as the README tells it: `npm run demo` (no provider key), the OpenAI SDK
// with only its base URL changed, a virtual key, the batch command run from another folder as the
// demo prints it, a provider that cannot be reached, and the dashboard in a real browser (Debian's
// chromium through playwright-core; without it this FAILS, as test/e2e/dashboard.test.ts does).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../support/gateway.ts";
import { stamped, until } from "./setup.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let demo: ChildProcess;
let out = "";
let url = "";
let token = "";
let browser: Browser | undefined;
const folder = mkdtempSync(join(tmpdir(), "slotgate-dayone-"));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`chromium not found at ${CHROMIUM}: sudo apt-get install -y chromium (or set CHROMIUM_PATH)`);
  // As the README says, through npm; in a process group of its own, so the test can stop it as Ctrl-C would.
  demo = spawn("npm", ["run", "demo", "--", "--port", String(await freePort())], {
    cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" },
  });
  demo.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  demo.stderr!.on("data", (b: Buffer) => (out += b.toString()));
  await until("the demo's banner", () => out.includes("Ctrl-C stops") || demo.exitCode !== null, 90_000);
  expect(demo.exitCode, out).toBeNull();
  // Everything a newcomer needs is in what it printed.
  url = /dashboard\s+(http:\/\/127\.0\.0\.1:\d+)\/admin\s+admin token: (\S+)/.exec(out)?.[1] ?? "";
  token = /admin token: (\S+)/.exec(out)?.[1] ?? "";
  expect(url, out).not.toBe("");
});

afterAll(async () => {
  await browser?.close();
  if (demo && demo.exitCode === null) {
    const exited = new Promise((done) => demo.once("exit", done));
    process.kill(-demo.pid!, "SIGTERM");
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

const admin = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
};

it("from the demo command to a batch from another folder and the dashboard, with nothing but what the demo prints", async () => {
  // 1. The OpenAI SDK with only the base URL changed, any key.
  const sdk = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: "sk-newcomer", maxRetries: 0 });
  const { data, response } = await sdk.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
  expect(data.choices[0]?.message.content).toMatch(/\w/);
  const own = stamped(response as unknown as Response, "openai", "gpt-4o-mini").key;

  // 2. A virtual key for the demo's pool, minted with the admin token it printed; the SDK with it alone.
  const vk = await admin<{ key: string }>("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name: "walk-job", pool: "demo" }) });
  expect(vk.key).toMatch(/^sgk-/);
  const pooled = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: vk.key, maxRetries: 0 });
  expect((await pooled.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).choices).toHaveLength(1);

  // 3. The batch command exactly as the demo printed it, in a folder outside the clone, with the virtual key.
  const printed = /batch\s+(node \S+ batch requests\.jsonl --out results\.jsonl --gateway \S+)/.exec(out)?.[1];
  expect(printed, out).toBeDefined();
  const lines = ["a", "b", "c"].map((id) => JSON.stringify({ custom_id: id, method: "POST", url: "/v1/chat/completions", body: { model: "gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content: id }] } }));
  writeFileSync(join(folder, "requests.jsonl"), `${lines.join("\n")}\n`);
  const batch = spawn("sh", ["-c", printed!], { cwd: folder, env: { ...process.env, OPENAI_API_KEY: vk.key }, stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  batch.stdout!.on("data", (b: Buffer) => (said += b.toString()));
  batch.stderr!.on("data", (b: Buffer) => (said += b.toString()));
  const code = await new Promise<number | null>((done) => batch.once("exit", done));
  expect(code, said).toBe(0);
  const results = readFileSync(join(folder, "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { response: { status_code: number } });
  expect(results.map((r) => r.response.status_code)).toEqual([200, 200, 200]);

  // 4. A provider that cannot be reached (a name that resolves nowhere): the 502 says which host and why, and each attempt is counted.
  const host = `slotgate-dayone-${Date.now()}.openai.azure.com`;
  const gone = await fetch(`${url}/azure/${host.split(".")[0]}/openai/deployments/d/chat/completions?api-version=2024-10-21`, {
    method: "POST", headers: { "api-key": "az-key", "content-type": "application/json", "x-slotgate-max-attempts": "3" }, body: "{}",
  });
  expect(gone.status).toBe(502);
  const why = ((await gone.json()) as { error: { message: string } }).error.message;
  expect(why).toMatch(new RegExp(`^the provider at ${host.replace(/\./g, "\\.")} could not be reached \\(3 attempts\\): the host name did not resolve, or the TLS handshake failed`));
  expect(why).not.toContain("az-key");
  await expect.poll(async () => (await admin<{ providers: { provider: string; counts: Record<string, number> }[] }>("/admin/upstream")).providers.find((p) => p.provider === "azure")?.counts.unreachable, { timeout: 10_000 }).toBe(3);

  // 5. The dashboard in a real browser, with the token the demo printed.
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${url}/admin`);
  await page.locator("#token").fill(token);
  await page.locator("#login button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible" });
  // The newcomer's own key and the pool's members, each row told apart.
  await page.locator(`#keys tbody tr[title="${own}"]`).waitFor({ state: "visible" });
  const byWho = page.locator("#keys tbody td.by");
  await expect.poll(async () => (await byWho.allTextContents()).filter((t) => t.startsWith("demo / ")).length).toBeGreaterThan(0);
  // The stand-in's quotas, as learned from its headers: 120 requests a minute.
  await page.locator(`#keys tbody tr[title="${own}"]`).click();
  await expect.poll(() => page.locator("#d-quotas").textContent()).toMatch(/requests left[\d,]+ \/ 120/);
  // The unreachable attempts, by provider.
  const azure = page.locator("#upstream tbody tr").filter({ has: page.locator("td", { hasText: /^azure$/ }) });
  await expect.poll(async () => (await azure.locator("td").allTextContents())[5]).toBe("3");
  expect(problems).toEqual([]);
});
