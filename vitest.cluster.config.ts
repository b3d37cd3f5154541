import { defineConfig } from "vitest/config";

// The cluster suite (`npm run test:cluster`): throwaway PostgreSQL clusters, PgBouncer, HAProxy
// and several `serve` processes on free loopback ports. One file at a time: each starts its own
// processes and they would only fight over two cores.
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    // The `serve` processes run the service built from `src` for the run.
    globalSetup: ["test/helpers/build-service.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    maxWorkers: 1,
    fileParallelism: false,
  },
});
