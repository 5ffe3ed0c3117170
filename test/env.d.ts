declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../src/index");
    durableNamespaces: "Limiter";
  }
  interface Env extends import("../src/env").Env {}
}
