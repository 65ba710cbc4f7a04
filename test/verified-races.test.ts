// The walk's answers to a filesystem that changes under it, one move at a time, and to a write that
// fails halfway, and which of its calls stay off the thread pool: each is staged by wrapping
// node:fs/promises (and node:fs's openSync, which the walk's directories and its check of the leaf
// use) for this file only, so the move happens exactly between two of the walk's calls instead of by
// luck.
import { constants, mkdirSync, rmSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { mkdir, readFile, readdir, rename, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { Tool } from "../src/gates/tool.js";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";
import { approvingCheck } from "./support/check-hooks.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { useSandbox } from "./support/sandbox.js";

type Open = (path: string, flags?: number, mode?: number) => Promise<FileHandle>;
type OpenSync = (path: string, flags?: number, mode?: number) => number;

const moves = vi.hoisted(() => ({
  /** Replaces `open` while set: gets the real one and the call's arguments. */
  open: undefined as ((real: Open, path: string, flags: number, mode?: number) => Promise<FileHandle>) | undefined,
  /** Replaces `openSync` while set, the same way. */
  openSync: undefined as ((real: OpenSync, path: string, flags: number, mode?: number) => number) | undefined,
  /** Runs before each `mkdir` while set, and may fail it. */
  beforeMkdir: undefined as ((path: string) => Promise<void>) | undefined,
  /** Runs after each successful `mkdir` while set. */
  afterMkdir: undefined as ((path: string) => Promise<void>) | undefined,
}));
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  const realOpenSync = actual.openSync as OpenSync;
  return {
    ...actual,
    openSync: (path: string, flags: number, mode?: number) =>
      moves.openSync === undefined ? realOpenSync(path, flags, mode) : moves.openSync(realOpenSync, path, flags, mode),
  };
});
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const realOpen = actual.open as Open;
  return {
    ...actual,
    open: (path: string, flags: number, mode?: number) => (moves.open === undefined ? realOpen(path, flags, mode) : moves.open(realOpen, path, flags, mode)),
    mkdir: async (path: string, options?: object) => {
      await moves.beforeMkdir?.(path);
      const made = await (actual.mkdir as (path: string, options?: object) => Promise<unknown>)(path, options);
      await moves.afterMkdir?.(path);
      return made;
    },
  };
});

const { O_CREAT, O_DIRECTORY, O_WRONLY } = constants;
const LONG_NAME = "n".repeat(256);

function failed(code: string, description: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${description}, open '${path}'`), { code, syscall: "open", path });
}

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(() => {
  box = sandbox.current;
});
afterEach(() => {
  moves.open = undefined;
  moves.openSync = undefined;
  moves.beforeMkdir = undefined;
  moves.afterMkdir = undefined;
});

function verifiedTools(blindCheck = false): { read: Tool; write: Tool } {
  const [read, write] = createVerifiedWorkspaceTools(box.root, blindCheck ? { fsApi: approvingCheck(box.root) } : {}) as [Tool, Tool];
  return { read, write };
}

describeNeeding(LINUX_PROCFS, "a directory that changes between the walk's calls", () => {
  it("enters a directory someone else made between its open and its mkdir, and never takes it back", async () => {
    await mkdir(join(box.root, "shared"));
    let hidden = false;
    moves.openSync = (real, path, flags) => {
      if (!hidden && path.endsWith("/shared") && (flags & O_DIRECTORY) !== 0) {
        hidden = true;
        throw failed("ENOENT", "no such file or directory", path);
      }
      return real(path, flags);
    };
    const answer = await verifiedTools(true).write.execute({ path: `shared/sub/${LONG_NAME}`, content: "x" });
    expect(answer).toMatchObject({ isError: true, content: expect.stringMatching(/^write: ENAMETOOLONG/) });
    expect(hidden).toBe(true);
    expect(await readdir(box.root)).toEqual(["shared"]);
  });

  it("gives up with ENOENT on a directory removed right after its mkdir, rather than making it again", async () => {
    let mkdirs = 0;
    moves.afterMkdir = async (path) => {
      mkdirs += 1;
      if (mkdirs === 1) await rmdir(path);
    };
    await expect(verifiedTools().write.execute({ path: "gone/x.txt", content: "x" })).resolves.toEqual({
      content: `write: ENOENT: no such file or directory, open 'gone'`,
      isError: true,
    });
    expect(mkdirs).toBe(1);
    expect(await readdir(box.root)).toEqual([]);
  });

  it("answers a mkdir that fails for another reason than EEXIST with that failure, naming the directory", async () => {
    // What a directory without write permission answers an unprivileged user (root is never refused).
    moves.beforeMkdir = async (path) => {
      throw Object.assign(new Error(`EACCES: permission denied, mkdir '${path}'`), { code: "EACCES", syscall: "mkdir", path });
    };
    await expect(verifiedTools().write.execute({ path: "new/x.txt", content: "x" })).resolves.toEqual({
      content: "write: EACCES: permission denied, mkdir 'new'",
      isError: true,
    });
    expect(await readdir(box.root)).toEqual([]);
  });

  it("takes back what it made only while the name still denotes it: a directory put in its place stays", async () => {
    const parked = join(box.scratch, "a-parked");
    moves.afterMkdir = async (path) => {
      if (!path.endsWith("/b")) return;
      await rename(join(box.root, "a"), parked);
      await mkdir(join(box.root, "a"));
    };
    await expect(verifiedTools().write.execute({ path: `a/b/${LONG_NAME}`, content: "x" })).resolves.toEqual({
      content: "write: path escapes workspace",
      isError: true,
    });
    expect(await readdir(join(box.root, "a"))).toEqual([]);
    expect(await readdir(parked)).toEqual([]);
  });
});

describeNeeding(LINUX_PROCFS, "what the walk asks on the caller's thread (SECURITY.md, \"Lookups are synchronous\")", () => {
  it("walks its directories without a trip through the thread pool: fs/promises' open never sees one", async () => {
    await mkdir(join(box.root, "a", "b"), { recursive: true });
    const directoryOpens: string[] = [];
    moves.open = async (real, path, flags, mode) => {
      if ((flags & O_DIRECTORY) !== 0) directoryOpens.push(path);
      return real(path, flags, mode);
    };
    const { read, write } = verifiedTools();
    await expect(write.execute({ path: "a/b/new/x.txt", content: "x" })).resolves.toEqual({ content: "wrote 1 bytes to a/b/new/x.txt" });
    await expect(read.execute({ path: "a/b/new/x.txt" })).resolves.toEqual({ content: "x" });
    expect(directoryOpens).toEqual([]);
  });
});

describeNeeding(LINUX_PROCFS, "a leaf that changes between the check and the rename, or a write that fails", () => {
  const isReplaceCheck = (path: string, flags: number) => path.endsWith("/leaf.txt") && (flags & O_WRONLY) !== 0 && (flags & O_CREAT) === 0;
  const isTemporary = (path: string, flags: number) => /\/\.write-[0-9a-f-]{36}$/.test(path) && (flags & O_CREAT) !== 0;

  /** Replaces the temporary file's writeFile: `instead` gets the real one and the content. */
  function onTemporaryWrite(instead: (writeFully: (data: string) => Promise<void>, data: string) => Promise<void>): void {
    moves.open = async (real, path, flags, mode) => {
      const handle = await real(path, flags, mode);
      if (!isTemporary(path, flags)) return handle;
      const writeFully = handle.writeFile.bind(handle);
      return Object.assign(handle, { writeFile: (data: string) => instead(writeFully, data) });
    };
  }

  it("replaces whole a file that appeared after the walk found its name free", async () => {
    await writeFile(join(box.root, "leaf.txt"), "old, and longer than the new content");
    moves.openSync = (real, path, flags, mode) => {
      if (isReplaceCheck(path, flags)) throw failed("ENOENT", "no such file or directory", path);
      return real(path, flags, mode);
    };
    await expect(verifiedTools().write.execute({ path: "leaf.txt", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to leaf.txt" });
    expect(await readFile(join(box.root, "leaf.txt"), "utf8")).toBe("new");
  });

  it("takes back the temporary file when the rename fails: a directory put at the name meanwhile", async () => {
    await writeFile(join(box.root, "leaf.txt"), "old");
    moves.openSync = (real, path, flags, mode) => {
      if (isReplaceCheck(path, flags)) {
        rmSync(join(box.root, "leaf.txt"));
        mkdirSync(join(box.root, "leaf.txt"));
        throw failed("ENOENT", "no such file or directory", path);
      }
      return real(path, flags, mode);
    };
    const answer = await verifiedTools().write.execute({ path: "leaf.txt", content: "new" });
    expect(answer).toEqual({
      content: expect.stringMatching(new RegExp(`^write: EISDIR: illegal operation on a directory, rename '\\.write-[0-9a-f-]{36}' -> 'leaf\\.txt'$`)),
      isError: true,
    });
    expect(await readdir(box.root)).toEqual(["leaf.txt"]);
  });

  it("leaves the old file as it was, and no temporary file, when writing the new content fails halfway", async () => {
    await writeFile(join(box.root, "leaf.txt"), "old");
    onTemporaryWrite(async (writeFully, data) => {
      await writeFully(data.slice(0, 2));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", syscall: "write" });
    });
    await expect(verifiedTools().write.execute({ path: "leaf.txt", content: "new content" })).resolves.toEqual({
      content: "write: ENOSPC: no space left on device, write",
      isError: true,
    });
    expect(await readdir(box.root)).toEqual(["leaf.txt"]);
    expect(await readFile(join(box.root, "leaf.txt"), "utf8")).toBe("old");
  });

  it("renames nothing into place when the signal fires while the content is written, and takes back what it made", async () => {
    const controller = new AbortController();
    onTemporaryWrite(async (writeFully, data) => {
      await writeFully(data);
      controller.abort();
    });
    await expect(verifiedTools().write.execute({ path: "new/after-abort.txt", content: "x" }, controller.signal)).resolves.toEqual({
      content: "write: aborted: the caller's AbortSignal fired; nothing was written",
      isError: true,
    });
    expect(await readdir(box.root)).toEqual([]);
  });

  it("answers a failure to create the temporary file, naming it, and leaves nothing", async () => {
    moves.open = async (real, path, flags, mode) => {
      if (isTemporary(path, flags)) throw failed("EACCES", "permission denied", path);
      return real(path, flags, mode);
    };
    await expect(verifiedTools().write.execute({ path: "new/x.txt", content: "x" })).resolves.toEqual({
      content: expect.stringMatching(new RegExp(`^write: EACCES: permission denied, open 'new/\\.write-[0-9a-f-]{36}'$`)),
      isError: true,
    });
    expect(await readdir(box.root)).toEqual([]);
  });
});
