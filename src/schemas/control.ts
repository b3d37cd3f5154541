import { z } from "zod";

/**
 * One request on the owner's control socket (`src/cli/data-dir-owner.ts`): an operator command
 * sent by another process. Anything else on the socket is refused as `invalid`; a request
 * without `argv` only asks who the owner is.
 */
export const controlRequest = z.strictObject({
  token: z.string().max(1024).optional(),
  argv: z.array(z.string().max(65_536)).max(1024).optional(),
  cwd: z.string().max(4096).optional(),
  env: z.record(z.string().max(256), z.string().max(65_536)).optional(),
});
