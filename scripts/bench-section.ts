/** A section of `npm run bench` (scripts/bench.ts): a named list of rows, measured in one go. */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Row } from "../test/support/bench-table.js";

export interface Section {
  name: string;
  run(options: BenchOptions): Promise<Row[]>;
}

export interface BenchOptions {
  /** Also measure what needs the npm registry (the official MCP server). */
  registry: boolean;
}

export async function withTempDir<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
