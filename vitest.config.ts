import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The cluster suite has its own command and config (vitest.cluster.config.ts).
    exclude: ["test/cluster/**", "**/node_modules/**"],
    globalSetup: ["test/helpers/announce-database.ts", "test/helpers/build-service.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only fight over them.
    maxWorkers: 2,
  },
});
