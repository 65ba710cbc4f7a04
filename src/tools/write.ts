/**
 * The `write` tool: create or replace a file inside the workspace, through gates 2 and 3.
 *
 * Promises: input without string `path` and `content` is refused with the chapter's message (an empty
 * `content` is valid and writes an empty file); the path is checked as `creating` before anything is
 * created; missing parent directories are then created and the file written at exactly the checked path.
 * The root's real path is resolved once, when the tool is created (`realRootOnce`).
 * Does not promise: atomicity (a failed write may leave a partial file inside the workspace),
 * protection against a swap between check and write (TOCTOU), or against a hardlink that names an
 * outside file (writing through it changes the outside file).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { failure } from "../failure.js";
import { stringField } from "../fields.js";
import { schema } from "../schema.js";
import type { Tool } from "../tool.js";
import { type FsApi, checkUnderRealRoot, realRootOnce } from "../workspace-path.js";

export const INVALID_WRITE_INPUT = "invalid write input: path and content must be strings";

export function writeTool(root: string, fsApi?: FsApi): Tool {
  const rootReal = realRootOnce(root, fsApi);
  return {
    spec: {
      name: "write",
      description:
        "Create or replace a UTF-8 text file inside the workspace. Missing parent directories are created.",
      inputSchema: schema(["path", "content"], {
        path: { type: "string", description: "File path, relative to the workspace root." },
        content: { type: "string", description: "The complete new content of the file." },
      }),
    },
    async execute(input) {
      const path = stringField(input, "path");
      const content = stringField(input, "content");
      if (path === undefined || content === undefined) return { content: INVALID_WRITE_INPUT, isError: true };
      try {
        const { path: target, checked } = await checkUnderRealRoot(await rootReal(), path, true, fsApi);
        // When the check found the file or its directory, `mkdir -p` of that directory is a no-op
        // (two calls: mkdir, then stat on EEXIST); it is needed only when directories are missing.
        if (checked !== target && checked !== dirname(target)) await mkdir(dirname(target), { recursive: true });
        await writeFile(target, content);
        return { content: `wrote ${Buffer.byteLength(content)} bytes to ${path}` };
      } catch (error) {
        return failure(error, "write");
      }
    },
  };
}
