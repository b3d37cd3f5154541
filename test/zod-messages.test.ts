import { describe, expect, it } from "vitest";
import { z } from "zod";
import { v2RecordSchema } from "../src/schemas/report.js";
import { zod3Messages } from "../src/schemas/zod-messages.js";

describe("the specification's (Zod 3) message texts", () => {
  it("are not installed for the whole process by importing a schema", () => {
    const parsed = z.number().safeParse("1");
    expect(parsed.error?.issues[0]?.message).not.toBe("Expected number, received string");
  });

  it("are what a parse with zod3Messages reports", () => {
    const parsed = v2RecordSchema.shape.bidDepth50.safeParse("1", zod3Messages);
    expect(parsed.error?.issues[0]?.message).toBe("Expected number, received string");
    const missing = v2RecordSchema.shape.type.safeParse(undefined, zod3Messages);
    expect(missing.error?.issues[0]?.message).toBe("Required");
  });
});
