// An interface may not extend an `import()` type directly (TS2499, hidden by skipLibCheck): alias it first.
type SlotgateEnv = import("../src/env").Env;

declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../src/index");
    durableNamespaces: "Limiter" | "Directory" | "CacheShard" | "VirtualKeys";
  }
  // The pool members' secrets vitest.config.ts binds for test/pools.
  interface Env extends SlotgateEnv {
    POOL_KEY_A: string;
    POOL_KEY_B: string;
    POOL_KEY_AZ: string;
    POOL_KEY_ANT: string;
    POOL_KEY_GEM: string;
  }
}
