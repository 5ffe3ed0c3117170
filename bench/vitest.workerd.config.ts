// One key's limiter driven inside workerd with no HTTP in front: the test isolate calls the
// Limiter Durable Object over RPC, as the Worker does. Run by bench/scenarios/ceiling.ts:
//   npx vitest run --config bench/vitest.workerd.config.ts
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/workerd/*.run.ts"],
    testTimeout: 120_000,
    onConsoleLog: (log) => !log.startsWith('{"event":'),
  },
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
});
