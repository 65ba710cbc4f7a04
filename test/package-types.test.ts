// The public API as a TypeScript user writes it, under this repository's noUncheckedIndexedAccess:
// `npm test` type-checks this file, so a createWorkspaceTools typed Tool[] would fail here (each
// destructured tool would be `Tool | undefined`).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { createWorkspaceTools } from "../src/index.js";

it("createWorkspaceTools answers the tuple [read, write, bash]", async () => {
  const root = await mkdtemp(join(tmpdir(), "workspace-gates-types-"));
  try {
    const [read, write, bash] = createWorkspaceTools(root);
    expect([read.spec.name, write.spec.name, bash.spec.name]).toEqual(["read", "write", "bash"]);
    await expect(write.execute({ path: "a.txt", content: "typed" })).resolves.toMatchObject({ content: expect.any(String) });
    await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: "typed" });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
