import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/announce-database.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only fight over them.
    maxWorkers: 2,
  },
});
