/**
 * The `write` tool: create or replace a file inside the workspace, through gates 2 and 3.
 *
 * Promises: input without string `path` and `content` is refused with the chapter's message (an empty
 * `content` is valid and writes an empty file); the path is checked as `creating` before anything is
 * created; missing parent directories are then created and the file written at exactly the checked path.
 * Only a regular file is written: an existing FIFO, device or socket answers `not a regular file`
 * without blocking and without being written to (an existing file is truncated only once it is known
 * to be a regular file).
 * A write that fails before its bytes go out leaves the workspace as it was: the directories it
 * created for the file are removed again (only those, and only while empty).
 * Does not promise: atomicity (a failure while the bytes are written, such as a full disk, leaves
 * the file truncated or partly written, and a new file in place),
 * protection against a swap between check and write (TOCTOU), or against a hardlink that names an
 * outside file (writing through it changes the outside file).
 */
import { constants, mkdir, open, rmdir } from "node:fs/promises";
import { dirname } from "node:path";
import { failure } from "../gates/failure.js";
import { stringField } from "../gates/fields.js";
import { type ToolSpec, schema } from "../gates/schema.js";
import type { Tool } from "../gates/tool.js";
import { type Boundary, nearestExistingAncestor } from "../gates/workspace-path.js";
import { INVALID_WRITE_INPUT, NOT_REGULAR_FILE } from "../gates/messages.js";


// No O_TRUNC: a file is emptied only after fstat says it is a regular one. O_NONBLOCK makes open() of
// a FIFO fail at once (ENXIO when no reader) instead of waiting for a reader; it does not exist on
// Windows, which has no FIFOs. On a regular file it changes nothing.
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | (constants.O_NONBLOCK ?? 0);

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
  return writeToolWith(async (path, content) => {
    const target = await boundary(path, true);
    const created = await createParents(target);
    try {
      await writeRegularFile(target, content);
    } catch (error) {
      await removeEmptyDirectories(created);
      throw error;
    }
  });
}

/**
 * The write tool around a way to put content at a path: the spec, the field check with the chapter's
 * message, the success message, and every failure as a `write:` result. The chapter's tool writes
 * through its boundary; the verified tools through a checked descriptor.
 */
export function writeToolWith(writeChecked: (path: string, content: string) => Promise<void>): Tool {
  return {
    spec: WRITE_SPEC,
    async execute(input) {
      const path = stringField(input, "path");
      const content = stringField(input, "content");
      if (path === undefined || content === undefined) return { content: INVALID_WRITE_INPUT, isError: true };
      try {
        await writeChecked(path, content);
        return { content: wroteMessage(content, path) };
      } catch (error) {
        return failure(error, "write");
      }
    },
  };
}

/**
 * `mkdir -p` of the target's directory, answering the directories that were missing before it
 * (deepest first) so that a failed write can take them back. If mkdir itself fails halfway, what it
 * made is taken back at once.
 */
async function createParents(target: string): Promise<string[]> {
  const directory = dirname(target);
  const existing = await nearestExistingAncestor(directory);
  // Stryker disable next-line ArrayDeclaration: a made-up first entry is a relative name, which rmdir resolves in the process's cwd, where no empty directory of that name exists
  const missing: string[] = [];
  for (let path = directory; path !== existing; path = dirname(path)) missing.push(path);
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

async function writeRegularFile(target: string, content: string): Promise<void> {
  const handle = await open(target, WRITE_FLAGS).catch((error: unknown) => {
    // ENXIO is what O_NONBLOCK gives for a FIFO without a reader, a socket or a device without a driver.
    throw (error as NodeJS.ErrnoException).code === "ENXIO" ? new Error(NOT_REGULAR_FILE) : error;
  });
  try {
    if (!(await handle.stat()).isFile()) throw new Error(NOT_REGULAR_FILE);
    await handle.truncate(0);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
