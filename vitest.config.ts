import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Property tests read their run count with inject("propertyRuns"): workerd sees no process.env.
    provide: { propertyRuns: Number(process.env.PROPERTY_RUNS ?? 200) },
    // The limiters' event lines (JSON, one per decision) would drown the report; tests that check
    // them read them through a sink or a console spy, which this does not affect.
    onConsoleLog: (log) => !log.startsWith('{"event":'),
    projects: [
      {
        // Unit and integration tests run inside workerd, with the Worker and its Durable Objects.
        // ADMIN_TOKEN is a secret (never in wrangler.toml); the admin tests need one.
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { ADMIN_TOKEN: "test-admin-token" } } })],
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", "test/node/**", "test/sim/**"],
        },
      },
      {
        // End-to-end: real `wrangler dev`, a stand-in provider on loopback, the official SDKs.
        test: {
          name: "node",
          environment: "node",
          include: ["test/e2e/**/*.test.ts", "test/node/**/*.test.ts", "test/sim/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
