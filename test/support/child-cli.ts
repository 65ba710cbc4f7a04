import { type ChildProcess, spawn } from "node:child_process";
import { readdir } from "node:fs/promises";

/** How a child's command ended, and what it printed. */
export interface ChildEnding {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The command as a child process, as a user runs it (`npx tsx src/kit/bin.ts`), with `tmp` as its
 * TMPDIR: whatever it leaves in the temp folder is in `tmp`, and signals reach it as they would from a
 * terminal or a CI runner.
 */
export function startCli(argv: readonly string[], tmp: string): { child: ChildProcess; ended: Promise<ChildEnding>; stderr: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/kit/bin.ts", ...argv], { env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const ended = new Promise<ChildEnding>((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, ended, stderr: () => stderr };
}

/**
 * What is in `tmp` but tsx's own compile cache (`tsx-<uid>`, made by the loader that runs the
 * TypeScript command and fixture servers, not by the audit).
 */
export async function leftIn(tmp: string): Promise<string[]> {
  return (await readdir(tmp)).filter((name) => !/^tsx-\d+$/.test(name));
}

/** Waits, polling, until `condition` holds; throws if the command ends first. */
export async function until(condition: () => Promise<boolean> | boolean, what: string, ended: Promise<unknown>): Promise<void> {
  let over = false;
  void ended.then(() => (over = true));
  while (!over) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the command ended before ${what}`);
}

/** Waits until `tmp` holds an entry whose name matches `pattern` (a sandbox, a probe). */
export async function untilIn(tmp: string, pattern: RegExp, ended: Promise<unknown>): Promise<void> {
  await until(async () => (await readdir(tmp)).some((name) => pattern.test(name)), `${tmp} held ${String(pattern)}`, ended);
}
