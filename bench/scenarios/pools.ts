// Key pools and virtual keys (issue 19): `--only pools` runs them all; each also alone
// (`--only pools-share`). The gateway gets POOLS and the members' keys as vars (bench/pools/config.ts);
// clouds-pool (issue 41) its own pool of three clouds, with Bedrock and Vertex at the stand-in.
import type { Scenario } from "../context.ts";
import { cloudsProviders } from "../../test/support/clouds-pool.ts";
import { cloudsBenchVars, runClouds } from "../pools/clouds.ts";
import { benchPoolVars } from "../pools/config.ts";
import { runOverhead } from "../pools/overhead.ts";
import { runQuota } from "../pools/quota.ts";
import { runRevoke } from "../pools/revoke.ts";
import { runShares } from "../pools/share.ts";

export const pools: Scenario[] = [
  { name: "pools-share", vars: benchPoolVars, run: runShares },
  { name: "pools-quota", vars: benchPoolVars, run: runQuota },
  { name: "pools-revoke", vars: benchPoolVars, run: runRevoke },
  { name: "pools-overhead", vars: benchPoolVars, run: runOverhead },
  { name: "clouds-pool", vars: cloudsBenchVars, providers: cloudsProviders, run: runClouds },
];
