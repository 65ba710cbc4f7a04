/**
 * What the bash tool's limits stop, and what they do not: the timeout and the AbortSignal SIGKILL the
 * shell's whole process group, so what the shell started in the background dies with it; a process
 * that let go of the output when the shell exited normally is not waited for and keeps running; maxBuffer
 * fires only when the tool reads past it, after the command may have moved on. Each
 * test records the background process's pid and checks it is gone, or alive and then kills it by that
 * pid, so no stray process outlives the test.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { Tool } from "../src/gates/tool.js";
import { createWorkspaceTools } from "../src/tools/workspace-tools.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";

const WAIT_LIMIT_MS = 5_000;

let box: Sandbox;
const strays: number[] = [];

beforeEach(async () => {
  box = await createSandbox("workspace-gates-cancel-");
});

/** The bash tool with this timeout: short where the test waits for it, the chapter's 10 s elsewhere. */
function bashTimingOutAfter(timeoutMs: number): Tool {
  return createWorkspaceTools(box.root, { bash: { timeoutMs } })[2] as Tool;
}

afterEach(async () => {
  for (const pid of strays.splice(0)) await killAndReap(pid);
  expect(await box.canaryChanges()).toEqual([]);
  await box.dispose();
});

describeNeeding(LINUX_PROCFS, "bash cancellation stops the shell's whole process group", () => {
  // Either stream alone is enough to keep the tool waiting, so each is held on its own too.
  it.each([
    ["stdout and stderr", ""],
    ["only stdout", " 2>/dev/null"],
    ["only stderr", " >/dev/null"],
  ])("a background process that keeps %s open: killed at the timeout, and the answer says so", async (_streams, redirect) => {
    const bash = bashTimingOutAfter(500);
    const result = await bash.execute({ command: `sh -c 'echo $$ > holder.pid; exec sleep 5'${redirect} & echo started` });
    const holder = await pidFrom(join(box.root, "holder.pid"));
    expect(result).toEqual({
      content:
        "bash: timeout: the shell exited, but a background process kept stdout or stderr open; its process group was killed after 500 ms\nstarted\n",
      isError: true,
    });
    await waitUntilGone(holder);
  });

  it("a background process that let go of stdout is not waited for", async () => {
    const result = await bashTimingOutAfter(10_000).execute({
      command: "sh -c 'echo $$ > detached.pid; exec sleep 5' > /dev/null 2>&1 & echo started",
    });
    expect(result).toEqual({ content: "started\n" });
    expect(isAlive(await pidFrom(join(box.root, "detached.pid")))).toBe(true);
  });

  it("abort kills a background grandchild with the shell: nothing it would do afterwards happens", async () => {
    const controller = new AbortController();
    const grandchild =
      "sh -c 'echo $$ > grandchild.pid; while [ ! -e go ]; do sleep 0.01; done; echo survived > after-abort.txt' > /dev/null 2>&1 &";
    const answering = bashTimingOutAfter(10_000).execute({ command: `${grandchild} : > started; exec sleep 5` }, controller.signal);
    await waitFor(join(box.root, "started"));
    const pid = await pidFrom(join(box.root, "grandchild.pid"));
    controller.abort();
    await expect(answering).resolves.toEqual({ content: "bash: aborted: the command was killed by the caller's AbortSignal", isError: true });
    await waitUntilGone(pid);
    // The grandchild waited for "go": had it survived, it would now write after-abort.txt.
    await writeFile(join(box.root, "go"), "");
    await sleep(200);
    await expect(readFile(join(box.root, "after-abort.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("maxBuffer fires when the tool reads the pipe: a command that finished its flood has already gone on to its next step", async () => {
    // The kernel's pipe holds the flood until the tool reads it; with the tool kept from reading (its
    // event loop blocked here), the shell writes past the limit and runs what follows before any kill.
    const bash = createWorkspaceTools(box.root, { bash: { maxBuffer: 16 } })[2] as Tool;
    const answering = bash.execute({ command: ": > started; while [ ! -e go ]; do sleep 0.01; done; head -c 17 /dev/zero; : > after; exec sleep 5" });
    await waitFor(join(box.root, "started"));
    writeFileSync(join(box.root, "go"), "");
    const ranAfterFlood = blockUntil(() => existsSync(join(box.root, "after")));
    await expect(answering).resolves.toMatchObject({
      content: expect.stringMatching(/^bash: maxBuffer exceeded: stdout passed 16 bytes; the command was killed/),
      isError: true,
    });
    expect(ranAfterFlood).toBe(true);
  });

  it("a process that left the group (setsid) outlives the abort: the limit that remains", async () => {
    const controller = new AbortController();
    const escapee = "setsid sh -c 'echo $$ > escapee.pid; exec sleep 5' > /dev/null 2>&1 &";
    const answering = bashTimingOutAfter(10_000).execute({ command: `${escapee} exec sleep 5` }, controller.signal);
    const pid = await pidFrom(join(box.root, "escapee.pid"));
    controller.abort();
    await expect(answering).resolves.toEqual({ content: "bash: aborted: the command was killed by the caller's AbortSignal", isError: true });
    expect(isAlive(pid)).toBe(true);
  });
});

async function waitUntilGone(pid: number): Promise<void> {
  for (let waited = 0; isAlive(pid) && waited < WAIT_LIMIT_MS; waited += 10) await sleep(10);
  expect(isAlive(pid)).toBe(false);
}

/** Waits for the pid file a background process writes, and registers the pid for cleanup. */
async function pidFrom(path: string): Promise<number> {
  await waitFor(path);
  let text = await readFile(path, "utf8");
  // The file exists from the moment the shell opens it; the number may follow a moment later.
  for (let waited = 0; !text.endsWith("\n") && waited < WAIT_LIMIT_MS; waited += 10) {
    await sleep(10);
    text = await readFile(path, "utf8");
  }
  const pid = Number(text.trim());
  expect(Number.isInteger(pid) && pid > 1).toBe(true);
  strays.push(pid);
  return pid;
}

async function waitFor(path: string): Promise<void> {
  for (let waited = 0; waited < WAIT_LIMIT_MS; waited += 10) {
    if (await readFile(path).then(() => true, () => false)) return;
    await sleep(10);
  }
  throw new Error(`${path} never appeared`);
}

/** Alive and not a zombie: a killed orphan may linger as a zombie until init reaps it. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !processState(pid).startsWith("Z");
}

function processState(pid: number): string {
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces, the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2);
  } catch {
    return "gone";
  }
}

async function killAndReap(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
  await waitUntilGone(pid);
}

/** Holds this thread (no event, no I/O callback runs) until `done` or WAIT_LIMIT_MS; answers `done()`. */
function blockUntil(done: () => boolean): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; !done() && waited < WAIT_LIMIT_MS; waited += 10) Atomics.wait(cell, 0, 0, 10);
  return done();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
