/**
 * One large read in a process of its own, so its peak memory is not mixed with anything else's.
 * Run by scripts/bench.ts: `tsx scripts/bench-read-child.ts <tool|readFile> <dir> <file> <reps>`.
 *
 * Prints one JSON line: the time of each repetition, and the peak RSS growth, measured as the
 * process's peak RSS after the reads (`resourceUsage().maxRSS`) minus its RSS just before them. That
 * is an upper bound on the growth (a peak reached while loading would count too) and exact whenever
 * the reads set the process's peak, which is the case that matters.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { readTool } from "../src/tools/read.js";
import { workspaceBoundary } from "../src/gates/workspace-path.js";
import { truncateRead } from "../src/gates/truncate.js";

export type ReadMode = "tool" | "readFile";

export interface ReadChildReport {
  timesMs: number[];
  peakGrowthBytes: number;
  /** Set when the read failed, e.g. ERR_STRING_TOO_LONG for readFile of a file over V8's string limit. */
  error?: string;
}

async function main(): Promise<void> {
  const [mode, dir, file, repsText] = process.argv.slice(2);
  if ((mode !== "tool" && mode !== "readFile") || dir === undefined || file === undefined) {
    throw new Error("usage: bench-read-child.ts <tool|readFile> <dir> <file> <reps>");
  }
  const reps = Number(repsText ?? "1");
  const read = readOnce(mode, dir);
  // Warm-up on a small file: loads and compiles the code path, so the big read measures only itself.
  await writeFile(join(dir, "warm-up.txt"), "warm");
  await read("warm-up.txt");

  const rssBefore = process.memoryUsage().rss;
  const timesMs: number[] = [];
  let error: string | undefined;
  for (let rep = 0; rep < reps && error === undefined; rep++) {
    const started = performance.now();
    try {
      await read(file);
      timesMs.push(performance.now() - started);
    } catch (cause) {
      error = (cause as NodeJS.ErrnoException).code ?? String(cause);
    }
  }
  const peakGrowthBytes = Math.max(0, process.resourceUsage().maxRSS * 1024 - rssBefore);
  const report: ReadChildReport = { timesMs, peakGrowthBytes, ...(error === undefined ? {} : { error }) };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** A read that throws unless it produced the cut content, so a failed read is never timed as a fast one. */
function readOnce(mode: ReadMode, dir: string): (file: string) => Promise<void> {
  if (mode === "readFile") {
    return async (file) => {
      truncateRead(await readFile(join(dir, file), "utf8"));
    };
  }
  const tool = readTool(workspaceBoundary(dir));
  return async (file) => {
    const result = await tool.execute({ path: file });
    if (result.isError === true) throw new Error(result.content);
  };
}

await main();
