// The CLI as a test drives it: in process, output captured, and a scratch directory for its reports.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { main } from "../../src/kit/cli.js";

export async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr };
}

/** A temp directory made before the file's tests and removed after them; read `.path` inside a test. */
export function scratchDirectory(prefix: string): { path: string } {
  const holder = { path: "" };
  beforeAll(async () => {
    holder.path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await rm(holder.path, { recursive: true, force: true });
  });
  return holder;
}
