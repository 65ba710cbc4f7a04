/**
 * The verified `read` tool: the chapter's read contract, with the file opened by descriptor walk.
 *
 * Promises: the chapter's spec, input error and truncation; the path passes the chapter's check, then
 * is opened through `openChecked` (no symlink followed by the kernel, `O_NOFOLLOW|O_NONBLOCK` on the
 * leaf) and read only after the descriptor is verified inside the root, a regular file, and within the
 * hardlink policy; the bytes come from that descriptor, so no swap after the check can change which
 * file they come from. `execute` never rejects.
 * Does not promise: what verify-opened.ts and open-beneath.ts leave open (bind mounts, a directory
 * renamed outside by a process with write access there, a hardlink when hardlinks are allowed).
 */
import { failure } from "../failure.js";
import { stringField } from "../fields.js";
import type { Tool } from "../tool.js";
import { fileChunks, readTruncated } from "../read-truncated.js";
import { INVALID_READ_INPUT, READ_SPEC } from "../tools/read.js";
import { type VerifiedSettings, openChecked } from "./checked-open.js";
import type { PinnedRoot } from "./pinned-root.js";

export function verifiedReadTool(root: PinnedRoot, settings: VerifiedSettings): Tool {
  return {
    spec: READ_SPEC,
    async execute(input) {
      const path = stringField(input, "path");
      if (path === undefined) return { content: INVALID_READ_INPUT, isError: true };
      try {
        const handle = await openChecked(root, path, "read", settings);
        try {
          return { content: await readTruncated(fileChunks(handle, (await handle.stat()).size)) };
        } finally {
          await handle.close();
        }
      } catch (error) {
        return failure(error, "read");
      }
    },
  };
}
