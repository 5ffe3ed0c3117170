// An interface may not extend an `import()` type directly (TS2499, hidden by skipLibCheck): alias it first.
type SlotgateEnv = import("../src/env").Env;

declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../src/index");
    durableNamespaces: "Limiter" | "Directory" | "CacheShard";
  }
  interface Env extends SlotgateEnv {}
}
