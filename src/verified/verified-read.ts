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
import { fileChunks, readTruncated } from "../gates/read-truncated.js";
import type { Tool } from "../gates/tool.js";
import { readToolWith } from "../tools/read.js";
import { type VerifiedSettings, openChecked } from "./checked-open.js";
import type { PinnedRoot } from "./pinned-root.js";

export function verifiedReadTool(root: PinnedRoot, settings: VerifiedSettings): Tool {
  return readToolWith(async (path) => {
    const handle = await openChecked(root, path, "read", settings);
    try {
      return await readTruncated(fileChunks(handle, (await handle.stat()).size));
    } finally {
      await handle.close();
    }
  });
}
