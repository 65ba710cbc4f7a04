import { link, mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { SECRET, type Sandbox } from "../src/audit/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/tool.js";
import { createWorkspaceTools } from "../src/workspace-tools.js";

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

  it.each([
    ["a directory symlink to outside", "escape-dir/secret.txt"],
    ["a file symlink to outside", "escape-file"],
    ["a symlink to a similar-prefix sibling", "sibling/secret.txt"],
  ])("refuses to read through %s", async (_label, path) => {
    await symlink(box.outside, join(box.root, "escape-dir"));
    await symlink(join(box.outside, "secret.txt"), join(box.root, "escape-file"));
    await symlink(`${box.root}-other`, join(box.root, "sibling"));
    const result = await read.execute({ path });
    expect(result).toEqual({ content: "read: path escapes workspace", isError: true });
    expect(result.content).not.toContain(SECRET);
  });

  it("refuses an absolute path outside", async () => {
    await expect(read.execute({ path: join(box.outside, "secret.txt") })).resolves.toEqual({
      content: "read: path escapes workspace",
      isError: true,
    });
  });

  it("answers a missing file with an error, not an exception", async () => {
    const result = await read.execute({ path: "missing.txt" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^read: ENOENT/);
  });
});

describe("write", () => {
  it("creates nested directories", async () => {
    await expect(write.execute({ path: "a/b/c.txt", content: "x" })).resolves.toEqual({ content: "wrote 1 bytes to a/b/c.txt" });
    expect(await readFile(join(box.root, "a", "b", "c.txt"), "utf8")).toBe("x");
  });

  it("writes an empty file for empty content", async () => {
    await expect(write.execute({ path: "empty.txt", content: "" })).resolves.toMatchObject({ content: "wrote 0 bytes to empty.txt" });
    expect(await readFile(join(box.root, "empty.txt"), "utf8")).toBe("");
  });

  it.each([
    ["into a directory symlink to outside", "escape-dir/new.txt"],
    ["into a new directory under a directory symlink", "escape-dir/deep/new.txt"],
    ["through a file symlink to outside", "escape-file"],
    ["into a similar-prefix sibling by absolute path", "<root>-other/new.txt"],
    ["through a parent step", "../outside/new.txt"],
  ])("refuses to write %s", async (_label, path) => {
    await symlink(box.outside, join(box.root, "escape-dir"));
    await symlink(join(box.outside, "secret.txt"), join(box.root, "escape-file"));
    const result = await write.execute({ path: path.replace("<root>", box.root), content: "pwned" });
    expect(result).toEqual({ content: "write: path escapes workspace", isError: true });
    // useSandbox checks after each test nothing was created or changed outside
  });

  it("writes through a symlink that stays inside, at its target", async () => {
    await mkdir(join(box.root, "real"));
    await symlink("real", join(box.root, "alias"));
    await write.execute({ path: "alias/x.txt", content: "in" });
    expect(await readdir(join(box.root, "real"))).toEqual(["x.txt"]);
  });

  it("opens the checked path, so link/.. means the root and not the link target's parent", async () => {
    await symlink(join(box.outside, "dir"), join(box.root, "link"));
    await expect(write.execute({ path: "link/../x.txt", content: "in" })).resolves.toMatchObject({ content: "wrote 2 bytes to link/../x.txt" });
    expect(await readFile(join(box.root, "x.txt"), "utf8")).toBe("in");
  });
});

describe("known limit: hardlinks pass every path check", () => {
  it("reads an outside file through a hardlink made inside", async () => {
    await link(join(box.outside, "secret.txt"), join(box.root, "k"));
    await expect(read.execute({ path: "k" })).resolves.toEqual({ content: `${SECRET} outside\n` });
  });
});

describe("invalid input (gate 2) answers with the chapter's messages", () => {
  it.each([[undefined], [null], [{}], [{ path: 1 }], [["a.txt"]], ["a.txt"]])("read %j", async (input) => {
    await expect(read.execute(input)).resolves.toEqual({ content: "invalid read input: path must be a string", isError: true });
  });

  it.each([[{ path: "a" }], [{ content: "x" }], [{ path: "a", content: 1 }], [{ path: null, content: "x" }], [null]])(
    "write %j",
    async (input) => {
      await expect(write.execute(input)).resolves.toEqual({
        content: "invalid write input: path and content must be strings",
        isError: true,
      });
    },
  );
});
