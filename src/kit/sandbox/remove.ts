/**
 * Removing a tree that a target under audit made, however deep.
 *
 * Promises: `removeTree` removes `path` and everything under it, links removed and never followed,
 * names as bytes (a name no JS string spells goes too), even when the tree is deeper than a path can
 * name (past PATH_MAX: a server can make one by relative steps, and Node's `rm` then fails with
 * ENAMETOOLONG); a path that is not there is no error. An error it cannot get past (a filesystem that
 * refuses) is thrown as `AuditFault`, the audit's own, never the target's.
 * Does not promise: to win against a process that keeps writing into the tree while it is removed.
 */
import { lstatSync, readdirSync, renameSync, rmSync } from "node:fs";
import { AuditFault } from "./fault.js";

/**
 * The longest path of a directory the walk reads: with a name of at most 255 bytes after it, every
 * path the walk names stays far below Linux's PATH_MAX of 4096 (and macOS's 1024 is met by the
 * directories moved up before that: they are renamed from a path of at most this plus one name).
 */
const SHALLOW_BYTES = 700;

export function removeTree(path: string | Buffer): void {
  try {
    rmSync(path, { recursive: true, force: true });
    return;
  } catch (error) {
    if (!tooLong(error)) throw new AuditFault(`cannot remove ${String(path)}: ${messageOf(error)}`);
  }
  try {
    moveDeepDirectoriesUp(Buffer.from(path));
    rmSync(path, { recursive: true, force: true });
  } catch (error) {
    throw new AuditFault(`cannot remove ${String(path)}, deeper than a path can name: ${messageOf(error)}`);
  }
}

/**
 * Walks `top` (a directory) and renames every directory whose path grows past `SHALLOW_BYTES` to a
 * fresh name right under `top`, then walks it from there: afterwards no path in the tree is long, so
 * a plain recursive removal names every entry.
 */
function moveDeepDirectoriesUp(top: Buffer): void {
  const toWalk: Buffer[] = [top];
  let moved = 0;
  const freshName = (): Buffer => {
    for (;;) {
      const candidate = Buffer.concat([top, Buffer.from(`/.moved-up-${moved++}`)]);
      if (lstatSync(candidate, { throwIfNoEntry: false }) === undefined) return candidate;
    }
  };
  for (let dir = toWalk.pop(); dir !== undefined; dir = toWalk.pop()) {
    for (const name of readdirSync(dir, { encoding: "buffer" })) {
      const child = Buffer.concat([dir, Buffer.from("/"), name]);
      if (lstatSync(child, { throwIfNoEntry: false })?.isDirectory() !== true) continue;
      if (child.length <= SHALLOW_BYTES) {
        toWalk.push(child);
        continue;
      }
      const up = freshName();
      renameSync(child, up);
      toWalk.push(up);
    }
  }
}

function tooLong(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENAMETOOLONG";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
