// The read and write tools on real directories: inside paths work, symlinks that lead out are refused
// with nothing created outside, and invalid input gets the chapter's messages.
import { lstat, mkdir, readFile, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { INVALID_READ_INPUTS, INVALID_WRITE_INPUTS } from "../fixtures/invalid-inputs.js";
import { INSIDE_WRITES, READ_ESCAPES, WRITE_ESCAPES, plantEscapeLinks } from "../fixtures/path-scenarios.js";
import { CANARY_FILE, SECRET, type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { writeTool, writeToolWith } from "../src/tools/write.js";
import { readTimedOut, readToolWith } from "../src/tools/read.js";
import type { FsApi } from "../src/gates/workspace-path.js";
import { NOT_AN_ANCESTOR } from "../src/gates/messages.js";

let box: Sandbox;
let read: Tool;
let write: Tool;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
  [read, write] = createWorkspaceTools(box.root) as [Tool, Tool, Tool];
});

describe("read", () => {
  it("reads a file inside the workspace", async () => {
    await writeFile(join(box.root, "a.txt"), "hello");
    await expect(read.execute({ path: "a.txt" })).resolves.toEqual({ content: "hello" });
  });

  it("truncates a file of 18 000 characters with the exact count", async () => {
    await writeFile(join(box.root, "big.txt"), "H".repeat(8_000) + "M".repeat(2_000) + "T".repeat(8_000));
    const { content } = await read.execute({ path: "big.txt" });
    expect(content).toBe(`${"H".repeat(8_000)}\n[truncated 2000 characters]\n${"T".repeat(8_000)}`);
  });

  it("reads a file of several chunks with 3-byte characters straddling the chunk boundaries", async () => {
    // 90 000 bytes: the 64 KiB chunk boundary falls inside a "€" (65 536 is not a multiple of 3).
    const text = "€".repeat(30_000);
    await writeFile(join(box.root, "euros.txt"), text);
    const { content } = await read.execute({ path: "euros.txt" });
    expect(content).toBe(`${"€".repeat(8_000)}\n[truncated 14000 characters]\n${"€".repeat(8_000)}`);
  });

  it.each(READ_ESCAPES)("refuses to read $label", async ({ path }) => {
    await plantEscapeLinks(box);
    const result = await read.execute({ path: path(box) });
    expect(result).toEqual({ content: "read: path escapes workspace", isError: true });
    expect(result.content).not.toContain(SECRET);
  });

  it("answers a missing file with an error, not an exception", async () => {
    const result = await read.execute({ path: "missing.txt" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^read: ENOENT/);
  });
});

describe("write", () => {
  it.each(INSIDE_WRITES)("writes $label", async ({ path, lands, setup }) => {
    await setup?.(box);
    await expect(write.execute({ path, content: "in" })).resolves.toEqual({ content: `wrote 2 bytes to ${path}` });
    expect(await readFile(join(box.root, lands), "utf8")).toBe("in");
  });

  it("writes an empty file for empty content", async () => {
    await expect(write.execute({ path: "empty.txt", content: "" })).resolves.toMatchObject({ content: "wrote 0 bytes to empty.txt" });
    expect(await readFile(join(box.root, "empty.txt"), "utf8")).toBe("");
  });

  it.each(WRITE_ESCAPES)("refuses to write $label", async ({ path }) => {
    await plantEscapeLinks(box);
    const result = await write.execute({ path: path(box), content: "pwned" });
    expect(result).toEqual({ content: "write: path escapes workspace", isError: true });
    // useSandbox checks after each test nothing was created or changed outside
  });
});

describe("invalid input (gate 2) answers with the chapter's messages", () => {
  it.each(INVALID_READ_INPUTS.map((input) => [input]))("read %j", async (input) => {
    await expect(read.execute(input)).resolves.toEqual({ content: "invalid read input: path must be a string", isError: true });
  });

  it.each(INVALID_WRITE_INPUTS.map((input) => [input]))("write %j", async (input) => {
    await expect(write.execute(input)).resolves.toEqual({
      content: "invalid write input: path and content must be strings",
      isError: true,
    });
  });
});

describe("write: the rename discipline in detail", () => {
  it("stops before the rename when the signal fires during the write: no file, no temporary file, no directory", async () => {
    const controller = new AbortController();
    const answering = write.execute({ path: "new/dir/late.txt", content: "x" }, controller.signal);
    controller.abort();
    await expect(answering).resolves.toEqual({ content: "write: aborted: the caller's AbortSignal fired; nothing was written", isError: true });
    await expect(readdir(box.root)).resolves.toEqual([]);
  });

  it("readToolWith answers the time bound even when its reader ignores the stop signal", async () => {
    const tool = readToolWith(() => new Promise<string>(() => undefined), 100);
    await expect(tool.execute({ path: "x" })).resolves.toEqual({ content: `read: ${readTimedOut(100)}`, isError: true });
  });

  it("read answers an open that fails after the check approved as the open's own error, not as 'not a regular file'", async () => {
    // A check that approves a file which is not there: the open itself then fails with ENOENT.
    const fsApi = { lstat, realpath: async (path: string) => path } as unknown as FsApi;
    const [approving] = createWorkspaceTools(box.root, { fsApi }) as [Tool, Tool, Tool];
    const answer = await approving.execute({ path: "missing.txt" });
    expect(answer).toMatchObject({ isError: true });
    expect(answer.content).toMatch(/^read: ENOENT: no such file or directory, open /);
  });

  it("writeToolWith never calls its writer once the signal has fired (the verified tools rely on it)", async () => {
    const controller = new AbortController();
    controller.abort();
    let called = false;
    const tool = writeToolWith(async () => {
      called = true;
    });
    await expect(tool.execute({ path: "x", content: "x" }, controller.signal)).resolves.toEqual({
      content: "write: aborted: the caller's AbortSignal fired; nothing was written",
      isError: true,
    });
    expect(called).toBe(false);
  });

  it("replaces a leaf swapped for a link to outside after the check, rather than following the link", async () => {
    // The check's lstat saw a plain file; a swap right after its realpath turns the leaf into a link
    // to the outside secret. The write decides the leaf's kind from the check's lstat (one lookup, not
    // two), so the rename replaces the link; asking lstat again would follow it and replace the secret.
    const leaf = join(box.root, "leaf.txt");
    await writeFile(leaf, "old");
    const secret = join(box.outside, CANARY_FILE);
    const secretBefore = await readFile(secret, "utf8");
    const swapping = {
      lstat,
      realpath: async (path: string) => {
        const real = await realpath(path);
        if (path === leaf) await rm(leaf).then(() => symlink(secret, leaf));
        return real;
      },
    } as unknown as FsApi;
    const [, swapped] = createWorkspaceTools(box.root, { fsApi: swapping }) as [Tool, Tool, Tool];
    await expect(swapped.execute({ path: "leaf.txt", content: "new" })).resolves.toEqual({ content: "wrote 3 bytes to leaf.txt" });
    await expect(readFile(secret, "utf8")).resolves.toBe(secretBefore);
    expect((await lstat(leaf)).isFile()).toBe(true);
    await expect(readFile(leaf, "utf8")).resolves.toBe("new");
  });

  it("names the file asked for, not its temporary file, when the temporary file cannot be made", async () => {
    // A boundary that claims the parent exists, so no directory is made and the open fails.
    const boundary = Object.assign(async (candidate: string) => join(box.root, candidate), {
      root: box.root,
      creating: async (candidate: string) => ({ path: join(box.root, candidate), existing: join(box.root, "gone") }),
    });
    await expect(writeTool(boundary).execute({ path: "gone/x.txt", content: "x" })).resolves.toEqual({
      content: "write: ENOENT: no such file or directory, open 'gone/x.txt'",
      isError: true,
    });
  });

  it("refuses, and creates nothing, when a boundary's findings name no ancestor of the path", async () => {
    // A boundary's `existing` must be the path or one of its ancestors; one that is neither (a fork's
    // bug) used to send the walk up past the filesystem root, growing a list until V8 gave up.
    await mkdir(join(box.root, "elsewhere"));
    const boundary = Object.assign(async (candidate: string) => join(box.root, candidate), {
      root: box.root,
      creating: async (candidate: string) => ({ path: join(box.root, candidate), existing: join(box.root, "elsewhere") }),
    });
    await expect(writeTool(boundary).execute({ path: "new/x.txt", content: "x" })).resolves.toEqual({ content: `write: ${NOT_AN_ANCESTOR}`, isError: true });
    expect(await readdir(box.root)).toEqual(["elsewhere"]);
    expect(await readdir(join(box.root, "elsewhere"))).toEqual([]);
  });

  describe("behind a hand-made boundary (a fork's), which gives neither the root nor its findings", () => {
    const handMade = () => async (candidate: string) => join(box.root, candidate);

    it("creates the target of a dangling link at the leaf, where open(O_CREAT) would, and keeps the link", async () => {
      await symlink("target.txt", join(box.root, "dangling"));
      await expect(writeTool(handMade()).execute({ path: "dangling", content: "via link" })).resolves.toEqual({ content: "wrote 8 bytes to dangling" });
      expect(await readFile(join(box.root, "target.txt"), "utf8")).toBe("via link");
      expect((await lstat(join(box.root, "dangling"))).isSymbolicLink()).toBe(true);
    });

    it("answers a link loop at the leaf with ELOOP, and names host paths as Node does", async () => {
      await symlink("loop", join(box.root, "loop"));
      await expect(writeTool(handMade()).execute({ path: "loop", content: "x" })).resolves.toEqual({
        content: `write: ELOOP: too many symbolic links encountered, stat '${join(box.root, "loop")}'`,
        isError: true,
      });
    });

    it("makes missing parent directories it finds by itself", async () => {
      await expect(writeTool(handMade()).execute({ path: "a/b/c.txt", content: "x" })).resolves.toEqual({ content: "wrote 1 bytes to a/b/c.txt" });
      expect(await readFile(join(box.root, "a/b/c.txt"), "utf8")).toBe("x");
    });
  });

  it("replaces a file whose real path is not valid UTF-8 only through its exact name", async () => {
    const raw = Buffer.concat([Buffer.from(`${box.root}/r`), Buffer.from([0xff])]);
    await writeFile(raw, "old");
    await symlink(raw, join(box.root, "link"));
    await expect(write.execute({ path: "link", content: "new" })).resolves.toEqual({ content: "write: the file's real path is not valid UTF-8", isError: true });
    expect(await readFile(raw, "utf8")).toBe("old");
  });
});
