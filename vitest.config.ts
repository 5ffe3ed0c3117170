import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";
import { isolatedWranglerConfig } from "./test/support/wrangler-config.ts";

/**
 * The tests own their configuration: wrangler.toml, copied where no `.dev.vars` or `.env` is (a
 * developer's own would be laid over it), and the bindings below.
 */
const WRANGLER_CONFIG = isolatedWranglerConfig(import.meta.dirname, resolve(import.meta.dirname, "node_modules/.cache/slotgate-workers-tests"));

/**
 * ADMIN_TOKEN is a secret (never in wrangler.toml); the admin tests need one. The pools and their
 * members' secrets are what test/pools drives: two OpenAI keys, an Azure deployment, an Anthropic key,
 * a Gemini key, and a pool whose keys share their cache.
 */
const POOL_BINDINGS = {
  ADMIN_TOKEN: "test-admin-token",
  // Counts go to their objects at once, not after a window held open in the request's waitUntil:
  // the tests that wait for a request's waitUntil work (support/app.ts) would wait that window out.
  STATS_FLUSH_MS: "0",
  // Virtual keys' own HMAC key: never the admin token (src/keys/keys.ts).
  VIRTUAL_KEY_SECRET: "test-virtual-key-secret",
  POOL_OUT_MS: "400",
  POOLS: JSON.stringify({
    duo: { provider: "openai", members: [{ name: "org-a", secret: "POOL_KEY_A" }, { name: "org-b", secret: "POOL_KEY_B" }] },
    mixed: {
      provider: "openai",
      members: [
        { name: "az", provider: "azure", resource: "myres", deployments: { "gpt-4o-mini": "mini-dep" }, apiVersion: "2024-10-21", secret: "POOL_KEY_AZ" },
      ],
    },
    claude: { provider: "anthropic", members: [{ name: "main", secret: "POOL_KEY_ANT" }] },
    gem: { provider: "gemini", members: [{ name: "g", secret: "POOL_KEY_GEM" }] },
    // Members of two dialects (issue 32): a 402 takes either out.
    cheap: { provider: "deepseek", members: [{ name: "ds", secret: "POOL_KEY_A" }, { name: "or", provider: "openrouter", secret: "POOL_KEY_B" }] },
    // Its keys read each other's cache entries (the default is each key its own).
    shared: { provider: "openai", sharedCache: true, members: [{ name: "s", secret: "POOL_KEY_A" }] },
  }),
  POOL_KEY_A: "sk-pool-member-aaaaaaaaaaaa",
  POOL_KEY_B: "sk-pool-member-bbbbbbbbbbbb",
  POOL_KEY_AZ: "azure-member-secret-cccccccc",
  POOL_KEY_ANT: "sk-ant-member-dddddddddddd",
  POOL_KEY_GEM: "AIza-member-eeeeeeeeeeee",
};

/**
 * The workers project's files share one workerd runner (isolate: false: a runner's start-up is ~0.7 s
 * a file). These read totals out of the whole Worker's shared storage (the Directory, the ledger, the
 * key store, metrics series), which other files' traffic would add to: each gets a fresh runner.
 */
const FRESH = [
  "test/batches/meter.test.ts", "test/cache/admin.test.ts", "test/keys/store.test.ts", "test/pools/proxy.test.ts",
  "test/routes/metrics-scale.test.ts", "test/routes/metrics.test.ts", "test/routes/otel.test.ts", "test/routes/security.test.ts", "test/routes/tiers.test.ts", "test/routes/usage.test.ts",
  "test/routes/callers.test.ts", "test/routes/dialects.test.ts", "test/routes/admin.test.ts",
  "test/pools/outs.test.ts",
];

export default defineConfig({
  test: {
    // Property tests read their run count with inject("propertyRuns"): workerd sees no process.env.
    provide: { propertyRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    // The limiters' event lines (JSON, one per decision) would drown the report; tests that check
    // them read them through a sink or a console spy, which this does not affect.
    onConsoleLog: (log) => !log.startsWith('{"event":'),
    // Two test files at once, whatever the machine: vitest's default (cores - 1) runs one at a time
    // on two cores, and most of an end-to-end file's time is waiting (a provider's window, a
    // wrangler dev starting), which a second file fills.
    maxWorkers: 2,
    projects: [
      {
        // Unit and integration tests run inside workerd, with the Worker and its Durable Objects.
        plugins: [cloudflareTest({ wrangler: { configPath: WRANGLER_CONFIG }, miniflare: { bindings: POOL_BINDINGS } })],
        test: {
          name: "workers",
          // workerd's logs of the disconnects tests make on purpose, counted rather than printed.
          globalSetup: ["test/support/quiet-workerd.ts"],
          isolate: false,
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", "test/node/**", "test/sim/**", "test/docs/**", "test/providers/names.test.ts", ...FRESH],
        },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: WRANGLER_CONFIG }, miniflare: { bindings: POOL_BINDINGS } })],
        test: { name: "workers-fresh", include: FRESH, globalSetup: ["test/support/quiet-workerd.ts"] },
      },
      {
        // End-to-end: real `wrangler dev`, a stand-in provider on loopback, the official SDKs.
        test: {
          name: "node",
          environment: "node",
          include: ["test/e2e/**/*.test.ts", "test/node/**/*.test.ts", "test/sim/**/*.test.ts", "test/docs/**/*.test.ts", "test/providers/names.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // What a gateway writes after its answer (waitUntil: cache entries, usage, keys) may take
          // seconds to show on two loaded cores: the default 1 s of expect.poll is too short.
          expect: { poll: { timeout: 10_000 } },
        },
      },
    ],
  },
});
