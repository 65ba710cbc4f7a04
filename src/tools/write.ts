/**
 * The `write` tool: create or replace a file inside the workspace, through gates 2 and 3.
 *
 * Promises: input without string `path` and `content` is refused with the chapter's message (an empty
 * `content` is valid and writes an empty file); the path is checked as `creating` before anything is
 * created; missing parent directories are then created and the file written at exactly the checked path.
 * Only a regular file is replaced: an existing directory answers EISDIR, and so does a path that
 * names a directory by its last step (`newdir/`, `dir/.`); an existing FIFO, device or socket answers
 * `not a regular file`, and none is ever opened.
 * Writes cannot tear. The content goes to a new temporary file in the destination's directory, which
 * then replaces the destination by `rename`: a reader, and a concurrent writer, sees the old file or
 * the whole new one, never a mix, and a write that fails halfway (disk full, file size limit) or is
 * aborted leaves the old file as it was, no temporary file, and none of the directories it created
 * (only those, and only while empty). A replaced file keeps its mode (not its owner: the new one
 * belongs to this process's user). A symlink at the leaf is followed: the file it leads to is
 * replaced and the link stays. The caller's signal is honoured up to the rename.
 * What rename changes: a file with other hard links is replaced by a new file under this name only;
 * the other names keep the old content. So writing through a hardlink to an outside file no longer
 * changes that file (it did when the file was written in place). A crash of the whole process between
 * creating the temporary file and the rename leaves that file (`.write-<random>`) behind.
 * Errors name paths relative to the workspace.
 * Does not promise: durability across a power loss (nothing is fsync'd), protection against a swap
 * between check and write (TOCTOU).
 */
import { randomUUID } from "node:crypto";
import { lstat, mkdir, open, realpath, rename, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { failure } from "../gates/failure.js";
import { callerSignal, stringField } from "../gates/fields.js";
import { type ToolSpec, schema } from "../gates/schema.js";
import type { Tool } from "../gates/tool.js";
import { type Boundary, type CheckedPath, type LeafStats, exactUtf8, inWorkspaceTerms, nearestExistingAncestor } from "../gates/workspace-path.js";
import { isInside } from "../gates/is-inside.js";
import { INVALID_WRITE_INPUT, NOT_AN_ANCESTOR, NOT_REGULAR_FILE, NOT_UTF8_NAME, WRITE_ABORTED } from "../gates/messages.js";

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
  return writeToolWith(async (path, content, signal) => {
    try {
      await replaceFile(await checkedForWrite(boundary, path), content, signal);
    } catch (error) {
      throw boundary.root === undefined ? error : inWorkspaceTerms(error, boundary.root);
    }
  });
}

/** What the boundary found out, asked again only of a hand-made boundary (a fork's) that does not say. */
async function checkedForWrite(boundary: Boundary, candidate: string): Promise<CheckedPath & { candidate: string }> {
  if (boundary.creating !== undefined) return { ...(await boundary.creating(candidate)), candidate };
  const path = await boundary(candidate, true);
  const existing = await nearestExistingAncestor(path);
  return { path, existing, leaf: existing === path ? await lstat(path) : undefined, candidate };
}

async function replaceFile(checked: CheckedPath & { candidate: string }, content: string, signal: AbortSignal | undefined): Promise<void> {
  const { path, existing, candidate } = checked;
  // `newdir/`, `newdir/.` and `a/b/..` name directories, though resolve() turns them into file names.
  if (["", ".", ".."].includes(candidate.slice(candidate.lastIndexOf("/") + 1))) throw isDirectory(path);
  const leaf = checked.leaf === undefined ? undefined : await landingPlace(path, checked.leaf);
  // Stryker disable next-line ArrayDeclaration: a made-up entry is a relative name, which rmdir resolves in the process's cwd, where no empty directory of that name exists
  const created = leaf === undefined ? await createParents(path, existing) : [];
  try {
    await replaceWith(leaf?.destination ?? path, content, leaf?.stats.mode, signal);
  } catch (error) {
    await removeEmptyDirectories(created);
    throw error;
  }
}

/**
 * Where an existing leaf is written, as `open(path, O_CREAT)` would reach it: the path itself, or the
 * file a symlink there leads to (the link stays). Refuses what is not a regular file. A dangling link
 * (which the chapter's check refuses, a fork's may not) leads where the kernel would create its target.
 * `linkStats` is the check's own `lstat` of the leaf, not asked again: a leaf that was a file then and
 * is swapped for a symlink afterwards is replaced by the rename rather than followed. One that was a
 * symlink then is followed to wherever it leads now (a window of the check, like the directory swap).
 */
async function landingPlace(path: string, linkStats: LeafStats): Promise<{ destination: string; stats: LeafStats }> {
  const stats = linkStats.isSymbolicLink() ? await stat(path).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await (await open(path, "a")).close();
    return stat(path);
  }) : linkStats;
  if (stats.isDirectory()) throw isDirectory(path);
  if (!stats.isFile()) throw new Error(NOT_REGULAR_FILE);
  return { destination: linkStats.isSymbolicLink() ? await exactRealpath(path) : path, stats };
}

/** realpath, refusing a name that would not be spelled back to the same bytes (another file). */
async function exactRealpath(path: string): Promise<string> {
  const text = exactUtf8(await realpath(path, { encoding: "buffer" }));
  if (text === undefined) throw new Error(NOT_UTF8_NAME);
  return text;
}

/** What the kernel answers for a file operation on a directory, for the path the model asked for. */
function isDirectory(path: string): NodeJS.ErrnoException {
  // Only `path` is read on (by inWorkspaceTerms); the answer is the message.
  return Object.assign(new Error(`EISDIR: illegal operation on a directory, open '${path}'`), { path });
}

/**
 * The write tool around a way to put content at a path: the spec, the field check with the chapter's
 * message, the caller's signal (checked, and refused at once when it has already fired), the success
 * message, and every failure as a `write:` result. `writeChecked` gets the signal and should not
 * commit the content once it fires. The chapter's tool writes through its boundary; the verified tools
 * through a checked descriptor.
 */
export function writeToolWith(writeChecked: (path: string, content: string, signal: AbortSignal | undefined) => Promise<void>): Tool {
  return {
    spec: WRITE_SPEC,
    async execute(input, signal) {
      const path = stringField(input, "path");
      const content = stringField(input, "content");
      if (path === undefined || content === undefined) return { content: INVALID_WRITE_INPUT, isError: true };
      try {
        const caller = callerSignal(signal);
        if (caller?.aborted === true) throw new Error(WRITE_ABORTED);
        await writeChecked(path, content, caller);
        return { content: wroteMessage(content, path) };
      } catch (error) {
        return failure(error, "write");
      }
    },
  };
}

/**
 * `mkdir -p` of the target's directory, given its nearest existing ancestor (found by the check, so
 * not walked again), answering the directories that were missing (deepest first) so that a failed
 * write can take them back. If mkdir itself fails halfway, what it made is taken back at once.
 */
async function createParents(target: string, existing: string): Promise<string[]> {
  const directory = dirname(target);
  // A hand-made boundary may answer an `existing` that is not an ancestor at all (a walk up towards it
  // would never end), so the missing directories are counted down from it, not searched for upwards.
  if (!isInside(existing, directory)) throw new Error(NOT_AN_ANCESTOR);
  const names = relative(existing, directory).split(sep).filter((name) => name !== "");
  const missing = names.map((_, index) => join(existing, ...names.slice(0, names.length - index)));
  // Stryker disable next-line ConditionalExpression: only spares a mkdir -p of a directory that exists, which changes nothing
  if (missing.length === 0) return missing;
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    await removeEmptyDirectories(missing);
    throw error;
  }
  return missing;
}

/**
 * rmdir each, deepest first. rmdir removes only an empty directory and does not follow a symlink in
 * the last component, so a directory that someone filled meanwhile stays, and so do its ancestors
 * (they hold it); like mkdir, it is exposed to a directory swapped for a symlink (TOCTOU). A failure is
 * no reason to stop: the deepest ones may never have been made (ENOENT, ENAMETOOLONG). Never throws,
 * since the caller is already reporting the failure that matters.
 */
async function removeEmptyDirectories(deepestFirst: readonly string[]): Promise<void> {
  for (const path of deepestFirst) await rmdir(path).catch(() => undefined);
}

/**
 * A new name for a write's temporary file, in both tool sets: unguessable, so that no one can hold it
 * ready (the file is created exclusively all the same). `randomUUID` draws from a cached pool; asking
 * `randomBytes` on every call cost more than a check's lookup.
 */
export function temporaryName(): string {
  return `.write-${randomUUID()}`;
}

/**
 * The content into a new temporary file beside `destination` (created exclusively, so a link planted
 * at that name is never followed), given `mode` when it replaces a file, then renamed over
 * `destination` unless the signal fired first. On any failure the temporary file is removed.
 */
async function replaceWith(destination: string, content: string, mode: number | undefined, signal: AbortSignal | undefined): Promise<void> {
  const temporary = join(dirname(destination), temporaryName());
  const handle = await open(temporary, "wx").catch((error: unknown) => {
    throw aboutDestination(error, temporary, destination);
  });
  try {
    try {
      // chmod, not open's mode: the umask would clear bits the replaced file had. (The type bits in
      // `stats.mode` are ignored by chmod.)
      if (mode !== undefined) await handle.chmod(mode);
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    if (signal?.aborted === true) throw new Error(WRITE_ABORTED);
    await rename(temporary, destination);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw aboutDestination(error, temporary, destination);
  }
}

/**
 * An error about the temporary file (its open, or its rename: `rename '<temporary>' -> '<dest>'`),
 * retold about the destination, the file the model asked for; other errors as they are.
 */
function aboutDestination(error: unknown, temporary: string, destination: string): unknown {
  // Stryker disable next-line ConditionalExpression: every error met here names the temporary file or no path at all (EFBIG, ENOSPC of a write), and for those the retelling changes no text
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).path !== temporary) return error;
  const message = error.message.replace(`'${temporary}' -> '${destination}'`, `'${destination}'`).replace(`'${temporary}'`, `'${destination}'`);
  return Object.assign(new Error(message), { ...error, path: destination, dest: undefined });
}
