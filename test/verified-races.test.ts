// The walk's answers to a filesystem that changes under it, one move at a time: each race is staged
// by wrapping node:fs/promises for this file only, so the move happens exactly between two of the
// walk's calls instead of by luck.
import { constants } from "node:fs";
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

const moves = vi.hoisted(() => ({
  /** Replaces `open` while set: gets the real one and the call's arguments. */
  open: undefined as ((real: Open, path: string, flags: number) => Promise<FileHandle>) | undefined,
  /** Runs after each successful `mkdir` while set. */
  afterMkdir: undefined as ((path: string) => Promise<void>) | undefined,
}));
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const realOpen = actual.open as Open;
  return {
    ...actual,
    open: (path: string, flags: number, mode?: number) => (moves.open === undefined ? realOpen(path, flags, mode) : moves.open(realOpen, path, flags)),
    mkdir: async (path: string, options?: object) => {
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
    moves.open = async (real, path, flags) => {
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
      content: `write: ENOENT: no such file or directory, open '${join(box.root, "gone")}'`,
      isError: true,
    });
    expect(mkdirs).toBe(1);
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

describeNeeding(LINUX_PROCFS, "a leaf that changes between the two opens of a write", () => {
  const isOpenOfExisting = (path: string, flags: number) => path.endsWith("/leaf.txt") && (flags & O_WRONLY) !== 0 && (flags & O_CREAT) === 0;

  it("writes a file that appeared between its two opens, on the next round", async () => {
    await writeFile(join(box.root, "leaf.txt"), "old");
    let hidden = 0;
    moves.open = async (real, path, flags) => {
      if (isOpenOfExisting(path, flags) && hidden++ === 0) throw failed("ENOENT", "no such file or directory", path);
      return real(path, flags);
    };
    await expect(verifiedTools().write.execute({ path: "leaf.txt", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to leaf.txt" });
    expect(await readFile(join(box.root, "leaf.txt"), "utf8")).toBe("new");
  });

  it("gives up with EEXIST after three rounds of a leaf that keeps appearing", async () => {
    await writeFile(join(box.root, "leaf.txt"), "old");
    let rounds = 0;
    moves.open = async (real, path, flags) => {
      if (isOpenOfExisting(path, flags)) {
        rounds += 1;
        throw failed("ENOENT", "no such file or directory", path);
      }
      return real(path, flags);
    };
    await expect(verifiedTools().write.execute({ path: "leaf.txt", content: "new" })).resolves.toEqual({
      content: `write: EEXIST: file already exists, open '${join(box.root, "leaf.txt")}'`,
      isError: true,
    });
    expect(rounds).toBe(3);
    expect(await readFile(join(box.root, "leaf.txt"), "utf8")).toBe("old");
  });

  it("answers any other failure to create the leaf at once, without another round", async () => {
    let creates = 0;
    moves.open = async (real, path, flags) => {
      if (path.endsWith("/new.txt") && (flags & O_CREAT) !== 0) {
        creates += 1;
        throw failed("EACCES", "permission denied", path);
      }
      return real(path, flags);
    };
    await expect(verifiedTools().write.execute({ path: "new.txt", content: "x" })).resolves.toEqual({
      content: `write: EACCES: permission denied, open '${join(box.root, "new.txt")}'`,
      isError: true,
    });
    expect(creates).toBe(1);
    expect(await readdir(box.root)).toEqual([]);
  });
});
