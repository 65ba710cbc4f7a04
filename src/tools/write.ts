/**
 * The `write` tool: create or replace a file inside the workspace, through gates 2 and 3.
 *
 * Promises: input without string `path` and `content` is refused with the chapter's message (an empty
 * `content` is valid and writes an empty file); the path is checked as `creating` before anything is
 * created; missing parent directories are then created and the file written at exactly the checked path.
 * Does not promise: atomicity (a failed write may leave a partial file inside the workspace),
 * protection against a swap between check and write (TOCTOU), or against a hardlink that names an
 * outside file (writing through it changes the outside file).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { failure } from "../failure.js";
import { stringField } from "../fields.js";
import { type ToolSpec, schema } from "../schema.js";
import type { Tool } from "../tool.js";
import type { Boundary } from "../workspace-path.js";

export const INVALID_WRITE_INPUT = "invalid write input: path and content must be strings";

export const WRITE_SPEC: ToolSpec = {
  name: "write",
  description:
    "Create or replace a UTF-8 text file inside the workspace. Missing parent directories are created.",
  inputSchema: schema(["path", "content"], {
    path: { type: "string", description: "File path, relative to the workspace root." },
    content: { type: "string", description: "The complete new content of the file." },
  }),
};

/** What a successful write answers, in the chapter's tools and the verified ones alike. */
export function wroteMessage(content: string, path: string): string {
  return `wrote ${Buffer.byteLength(content)} bytes to ${path}`;
}

export function writeTool(boundary: Boundary): Tool {
  return {
    spec: WRITE_SPEC,
    async execute(input) {
      const path = stringField(input, "path");
      const content = stringField(input, "content");
      if (path === undefined || content === undefined) return { content: INVALID_WRITE_INPUT, isError: true };
      try {
        const target = await boundary(path, true);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, content);
        return { content: wroteMessage(content, path) };
      } catch (error) {
        return failure(error, "write");
      }
    },
  };
}
