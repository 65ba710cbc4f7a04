// The read and write tools on real directories: inside paths work, symlinks that lead out are refused
// with nothing created outside, and invalid input gets the chapter's messages.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { INVALID_READ_INPUTS, INVALID_WRITE_INPUTS } from "../fixtures/invalid-inputs.js";
import { INSIDE_WRITES, READ_ESCAPES, WRITE_ESCAPES, plantEscapeLinks } from "../fixtures/path-scenarios.js";
import { SECRET, type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { useSandbox } from "./support/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";

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
