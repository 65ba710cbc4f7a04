import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { main } from "../../src/kit/cli.js";

/** The command in-process, its output collected; `stderrIsTTY` makes progress draw as on a terminal. */
export async function cli(argv: readonly string[], stderrIsTTY = false): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), stderrIsTTY });
  return { code, stdout, stderr };
}

/** A temp directory for the calling file's tests, removed after them. */
export function useScratch(prefix: string): { readonly path: string } {
  const holder = { path: "" };
  beforeAll(async () => {
    holder.path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await rm(holder.path, { recursive: true, force: true });
  });
  return holder;
}
