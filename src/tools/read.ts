/**
 * The `read` tool: a UTF-8 text file inside the workspace, through gates 2, 3 and 4.
 *
 * Promises: input without a string `path` is refused with the chapter's message; the file opened is
 * the one the boundary (`workspacePath`) checked, not creating; only regular files are read, so a FIFO or a device
 * answers `not a regular file` instead of blocking the agent; content over 16 000 characters keeps
 * the first and last 8 000 and says how many were dropped. The file is read in chunks
 * (read-truncated.ts): memory stays bounded for any size, time grows with it, and the result is the
 * one `truncateRead(await readFile(path, "utf8"))` gives.
 * Does not promise: protection against a swap between check and open (TOCTOU), or against a hardlink
 * that names an outside file. Invalid UTF-8 is decoded with U+FFFD replacements.
 */
import { constants, open } from "node:fs/promises";
import { failure } from "../gates/failure.js";
import { stringField } from "../gates/fields.js";
import { type ToolSpec, schema } from "../gates/schema.js";
import type { Tool } from "../gates/tool.js";
import { fileChunks, readTruncated } from "../gates/read-truncated.js";
import type { Boundary } from "../gates/workspace-path.js";
import { INVALID_READ_INPUT, NOT_REGULAR_FILE } from "../gates/messages.js";


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

export function readTool(boundary: Boundary): Tool {
  return readToolWith(async (path) => readRegularFile(await boundary(path, false)));
}

/**
 * The read tool around a way to fetch a path's content, already cut to the read rule: the spec, the
 * field check with the chapter's message, and every failure as a `read:` result. The chapter's tool
 * fetches through its boundary; the verified tools through a checked descriptor.
 */
export function readToolWith(readCut: (path: string) => Promise<string>): Tool {
  return {
    spec: READ_SPEC,
    async execute(input) {
      const path = stringField(input, "path");
      if (path === undefined) return { content: INVALID_READ_INPUT, isError: true };
      try {
        return { content: await readCut(path) };
      } catch (error) {
        return failure(error, "read");
      }
    },
  };
}

/** The file's content, already cut to the read rule. */
async function readRegularFile(target: string): Promise<string> {
  const handle = await open(target, READ_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error(NOT_REGULAR_FILE);
    return await readTruncated(fileChunks(handle, stats.size));
  } finally {
    await handle.close();
  }
}
