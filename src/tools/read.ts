/**
 * The `read` tool: a UTF-8 text file inside the workspace, through gates 2, 3 and 4.
 *
 * Promises: input without a string `path` is refused with the chapter's message; the file opened is
 * the one the boundary (`workspacePath`) checked, not creating; only regular files are read, so a FIFO or a device
 * answers `not a regular file` instead of blocking the agent; content over 16 000 characters keeps
 * the first and last 8 000 and says how many were dropped. The file is read in chunks
 * (read-truncated.ts): memory stays bounded for any size, time grows with it, and the result is the
 * one `truncateRead(await readFile(path, "utf8"))` gives. A read is bounded in time: it answers
 * `read: timeout: …` after `timeoutMs` (default `DEFAULT_READ_TIMEOUT_MS`, 10 s, as bash) and
 * `read: aborted: …` as soon as the caller's signal fires, and stops reading the file then. Errors
 * name paths relative to the workspace.
 * Does not promise: protection against a swap between check and open (TOCTOU), or against a hardlink
 * that names an outside file; the time bound while a lookup hangs (the check's `lstat` and `realpath`
 * and the file's `fstat` are synchronous, as they cost less than a trip through the thread pool, so a
 * dead network filesystem holds the thread; the open and the reads are not). Invalid UTF-8 is decoded
 * with U+FFFD replacements.
 */
import { fstatSync } from "node:fs";
import { constants, open } from "node:fs/promises";
import { failure } from "../gates/failure.js";
import { callerSignal, stringField } from "../gates/fields.js";
import { type ToolSpec, schema } from "../gates/schema.js";
import type { Tool } from "../gates/tool.js";
import { fileChunks, readTruncated } from "../gates/read-truncated.js";
import { type Boundary, inWorkspaceTerms } from "../gates/workspace-path.js";
import { INVALID_READ_INPUT, NOT_REGULAR_FILE, READ_ABORTED } from "../gates/messages.js";

/** The read time bound when none is given: the chapter's bash timeout, 10 s. */
export const DEFAULT_READ_TIMEOUT_MS = 10_000;

/** read: the file took longer than the read time bound (`readTimeoutMs`). */
export function readTimedOut(timeoutMs: number): string {
  return `timeout: the read was stopped after ${timeoutMs} ms`;
}

// O_NONBLOCK makes open() of a FIFO return at once so the type check below can refuse it; it does
// not exist on Windows, where FIFOs are not files anyway.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export const READ_SPEC: ToolSpec = {
  name: "read",
  description:
    "Read a UTF-8 text file inside the workspace. Files over 16000 characters come back as the first and last 8000 characters with a [truncated N characters] marker between them.",
  inputSchema: schema(["path"], {
    path: { type: "string", description: "File path, relative to the workspace root." },
  }),
};

export function readTool(boundary: Boundary, timeoutMs = DEFAULT_READ_TIMEOUT_MS): Tool {
  return readToolWith(async (path, signal) => {
    try {
      return await readRegularFile(await boundary(path, false), signal);
    } catch (error) {
      throw boundary.root === undefined ? error : inWorkspaceTerms(error, boundary.root);
    }
  }, timeoutMs);
}

/**
 * The read tool around a way to fetch a path's content, already cut to the read rule: the spec, the
 * field check with the chapter's message, the time bound and the caller's signal, and every failure
 * as a `read:` result. `readCut` gets a signal that fires at the bound or with the caller's, and
 * should stop reading then; the answer does not wait for it. The chapter's tool fetches through its
 * boundary; the verified tools through a checked descriptor.
 * Throws at construction when `timeoutMs` is not a positive finite number (it would switch the bound off).
 */
export function readToolWith(readCut: (path: string, signal: AbortSignal) => Promise<string>, timeoutMs = DEFAULT_READ_TIMEOUT_MS): Tool {
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError(`readTimeoutMs must be a positive finite number, got ${timeoutMs}`);
  return {
    spec: READ_SPEC,
    async execute(input, signal) {
      const path = stringField(input, "path");
      if (path === undefined) return { content: INVALID_READ_INPUT, isError: true };
      try {
        return { content: await bounded(callerSignal(signal), timeoutMs, (stop) => readCut(path, stop)) };
      } catch (error) {
        return failure(error, "read");
      }
    },
  };
}

/**
 * `work` raced against the time bound and the caller's signal: whichever fires first rejects with its
 * rule at once, and aborts the signal `work` was given so that it stops too.
 */
async function bounded<T>(caller: AbortSignal | undefined, timeoutMs: number, work: (stop: AbortSignal) => Promise<T>): Promise<T> {
  if (caller?.aborted === true) throw new Error(READ_ABORTED);
  const stop = new AbortController();
  const stopped = new Promise<never>((_, reject) => stop.signal.addEventListener("abort", () => reject(stop.signal.reason as Error)));
  const onAbort = () => stop.abort(new Error(READ_ABORTED));
  caller?.addEventListener("abort", onAbort);
  const timer = setTimeout(() => stop.abort(new Error(readTimedOut(timeoutMs))), timeoutMs);
  try {
    return await Promise.race([work(stop.signal), stopped]);
    // Stryker disable all: the cleanup only frees what a settled race no longer hears (a later abort or timeout rejects `stopped`, which the race has already handled); no answer can tell it ran
  } finally {
    clearTimeout(timer);
    caller?.removeEventListener("abort", onAbort);
  }
  // Stryker restore all
}

/** The file's content, already cut to the read rule. */
async function readRegularFile(target: string, signal: AbortSignal): Promise<string> {
  const handle = await open(target, READ_FLAGS).catch((error: unknown) => {
    // ENXIO is what O_NONBLOCK gives for a socket (and a device without a driver): not a file either.
    throw (error as NodeJS.ErrnoException).code === "ENXIO" ? new Error(NOT_REGULAR_FILE) : error;
  });
  try {
    // A lookup, made synchronously as the path check's are (`SYNC_LOOKUPS` in workspace-path.ts).
    const stats = fstatSync(handle.fd);
    if (!stats.isFile()) throw new Error(NOT_REGULAR_FILE);
    return await readTruncated(fileChunks(handle, stats.size), signal);
  } finally {
    await handle.close();
  }
}
