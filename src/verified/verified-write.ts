/**
 * The verified `write` tool: the chapter's write contract, with every directory and the file reached
 * by descriptor walk.
 *
 * Promises: the chapter's spec, input error and success message; the path passes the chapter's check
 * (creating), then `openChecked` creates missing directories inside the directory that holds them and
 * opens the file without truncating it; only after the descriptor is verified (inside the root, a
 * regular file, within the hardlink policy) is it truncated and written, through that descriptor.
 * A refused write changes no existing file, and what it created outside it removes again.
 * `execute` never rejects.
 * Does not promise: atomicity (a failed write may leave a partial file inside), or what
 * open-beneath.ts leaves open (bind mounts, a directory renamed outside by a process with write
 * access there, a hardlink when hardlinks are allowed).
 */
import type { Tool } from "../gates/tool.js";
import { writeToolWith } from "../tools/write.js";
import { type VerifiedSettings, openChecked } from "./checked-open.js";
import type { PinnedRoot } from "./pinned-root.js";

export function verifiedWriteTool(root: PinnedRoot, settings: VerifiedSettings): Tool {
  return writeToolWith(async (path, content) => {
    const handle = await openChecked(root, path, "write", settings);
    try {
      await handle.truncate(0);
      await handle.writeFile(content, "utf8");
    } finally {
      await handle.close();
    }
  });
}
