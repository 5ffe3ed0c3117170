import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** fast-check runs per property: PROPERTY_RUNS in the environment of `vitest`, 200 by default (vitest.config.ts). */
    propertyRuns: number;
  }
}

export const RUNS = inject("propertyRuns");
export const TIMEOUT = 30_000 + RUNS * 5;
