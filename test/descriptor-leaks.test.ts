// Every descriptor a tool opens is closed before it answers, on success and on each refusal. An agent
// calls the tools thousands of times in one process; a handle left to the garbage collector is a
// descriptor held for an unknown time, and a FIFO held open for writing keeps its reader waiting.
import { execFileSync } from "node:child_process";
import { constants, mkdir, open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { descriptorsOn } from "./support/descriptors.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { useSandbox } from "./support/sandbox.js";
import { describeEachToolSet } from "./support/tool-sets.js";

interface LeakCase {
  label: string;
  /** What is in the workspace before the call; `pipe` is a FIFO. */
  plant: "file" | "directory" | "pipe" | "nothing";
  call: "read" | "write";
  /** Whether the test holds a reader on the FIFO, so that opening it for writing succeeds. */
  readerHeld?: boolean;
  answers: "content" | "error";
}

const CASES: readonly LeakCase[] = [
  { label: "read of a regular file", plant: "file", call: "read", answers: "content" },
  { label: "read of a directory (opened, then refused as not a regular file)", plant: "directory", call: "read", answers: "error" },
  { label: "read of a FIFO (opened without blocking, then refused)", plant: "pipe", call: "read", answers: "error" },
  { label: "write of a new file", plant: "nothing", call: "write", answers: "content" },
  { label: "write over an existing file", plant: "file", call: "write", answers: "content" },
  { label: "write into a FIFO that has a reader (opened, then refused)", plant: "pipe", call: "write", readerHeld: true, answers: "error" },
];

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(() => {
  box = sandbox.current;
});

async function plant(kind: LeakCase["plant"], path: string): Promise<void> {
  if (kind === "file") await writeFile(path, "inside");
  else if (kind === "directory") await mkdir(path);
  else if (kind === "pipe") execFileSync("mkfifo", [path]);
}

describeEachToolSet("no descriptor held once a tool answers", (toolSet) => {
  describeNeeding(LINUX_PROCFS, "counted in /proc", () => {
    it.each(CASES)("$label", async ({ plant: kind, call, readerHeld, answers }) => {
      const target = join(box.root, "target");
      await plant(kind, target);
      const reader = readerHeld === true ? await open(target, constants.O_RDONLY | constants.O_NONBLOCK) : undefined;
      try {
        const [read, write] = toolSet.create(box.root) as [Tool, Tool, Tool];
        const before = await descriptorsOn(target);
        const result = await (call === "read" ? read.execute({ path: "target" }) : write.execute({ path: "target", content: "x" }));
        expect(result.isError === true ? "error" : "content").toBe(answers);
        expect(await descriptorsOn(target)).toBe(before);
      } finally {
        await reader?.close();
      }
    });
  });
});
