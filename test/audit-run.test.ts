// Runs a user can live with, driven the way users drive them: a child process running the bin, with a
// TMPDIR of its own that must hold no sandbox afterwards.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./support/cli.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";

// A child starts tsx and runs real properties: slow on a loaded machine, so more than vitest's 30 s.
const CHILD_TIMEOUT_MS = 180_000;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "workspace-gates-run-test-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

interface Child {
  process: ChildProcess;
  tmp: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The bin from source, as `node --import tsx src/kit/bin.ts …`, with a private, empty TMPDIR. */
async function bin(name: string, args: readonly string[]): Promise<Child> {
  const tmp = join(scratch, `tmp-${name}`);
  await mkdir(tmp);
  const child = spawn(process.execPath, ["--import", "tsx", "src/kit/bin.ts", ...args], { env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { process: child, tmp, stdout: () => stdout, stderr: () => stderr, exit };
}

/** What the audit left in a TMPDIR (tsx may keep its compile cache there, which is not ours). */
async function sandboxesIn(tmp: string): Promise<string[]> {
  return (await readdir(tmp)).filter((name) => name.startsWith("workspace-gates-"));
}

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe("a module whose workspacePath never settles", () => {
  it("fails as a hang with its counterexample, exits although a timer of the module is still live, and leaves no sandbox", async () => {
    const module = join(scratch, "hangs.mjs");
    await writeFile(module, "export const workspacePath = () => new Promise(() => { setInterval(() => {}, 1000); });\n");
    const child = await bin("hang", ["audit", module, "--only", "containment.workspacePath,precision.workspacePath", "--timeout", "300", "--runs", "3", "--seed", "1"]);
    const { code } = await child.exit;
    expect(code, child.stderr()).toBe(1);
    expect(child.stdout()).toMatch(/^workspacePath\s+containment\.workspacePath\s+FAILED\s/m);
    expect(child.stdout()).toContain("    broken: no answer within 300 ms: the call hangs (the case is not shrunk)\n    counterexample:\n      workspace: ");
    // The call that hung is shown as it was made, the sandbox written $BOX.
    expect(child.stdout()).toMatch(/^ {8}1\. workspacePath\(\S*\$BOX\S* \+ "\/\S+", .*, (true|false)\)$/m);
    expect(child.stdout()).toMatch(/^ {4}replay: .* --only containment\.workspacePath --seed 1 --path \S+$/m);
    expect(await sandboxesIn(child.tmp)).toEqual([]);
  }, CHILD_TIMEOUT_MS);
});

describe("the time budget", () => {
  it("counts the calls of every block it ran, not only the last (regression: coverage saw the last block's)", async () => {
    const json = join(scratch, "blocks.json");
    // A share long enough for a second block on a loaded machine too: the floor of ten trees runs first, whatever the load.
    const { code } = await cli(["audit", "--only", "containment.read", "--time", "10", "--seed", "1", "--json", json]);
    expect(code).toBe(0);
    const [read] = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results;
    // More than the first block of ten trees ran, and every case asked the read tool twice at least.
    expect(read?.runs).toBeGreaterThan(10);
    expect(read?.calls.read).toBeGreaterThanOrEqual(2 * (read?.cases ?? Infinity));
  });
});

describe("sandboxes kept from property to property", () => {
  it("are all removed when the audit ends, passed or failed", async () => {
    for (const [name, module] of [["passes", "src/tools/workspace-tools.ts"], ["fails", "fixtures/vulnerable/similar-prefix.ts"]] as const) {
      const child = await bin(`kept-${name}`, ["audit", module, "--only", "containment.read,containment.write,fields.rootFromInput", "--runs", "10", "--seed", "1"]);
      const { code } = await child.exit;
      expect(code, child.stderr()).toBe(name === "passes" ? 0 : 1);
      expect(await sandboxesIn(child.tmp)).toEqual([]);
    }
    // Two audits as children, one after the other: past the default 30 s in Stryker's dry run (load 19).
  }, CHILD_TIMEOUT_MS);
});

describe("Ctrl-C", () => {
  it("prints what ran so far, removes every sandbox, and exits 130", async () => {
    const json = join(scratch, "interrupted.json");
    const child = await bin("sigint", ["audit", "--only", "isInside.posix,containment.write", "--runs", "20000", "--seed", "1", "--json", json]);
    await until(() => child.stderr().includes("audit: [1/2] isInside.posix passed"), "the first property");
    await until(async () => (await sandboxesIn(child.tmp)).length > 0, "a sandbox of the second property");
    child.process.kill("SIGINT");
    const { code } = await child.exit;
    expect(code, child.stderr()).toBe(130);
    expect(child.stdout()).toMatch(/^isInside\s+isInside\.posix\s+passed\s+20000\s/m);
    expect(child.stdout()).not.toContain("containment.write");
    expect(child.stdout()).toContain("\ninterrupted by SIGINT: only the properties above ran\n");
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report).toMatchObject({ interrupted: "interrupted by SIGINT", summary: { total: 1, passed: 1 } });
    expect(await sandboxesIn(child.tmp)).toEqual([]);
  }, CHILD_TIMEOUT_MS);
});

describe("output that cannot be delivered", () => {
  it("exits 2 with one line when stdout is closed (EPIPE)", async () => {
    const child = await bin("epipe", ["audit", "--only", "isInside.posix", "--runs", "3"]);
    child.process.stdout?.destroy();
    const { code } = await child.exit;
    expect(code).toBe(2);
    expect(child.stderr()).toMatch(/^workspace-gates: cannot write to stdout \(EPIPE\); output is incomplete\n$/m);
  }, CHILD_TIMEOUT_MS);

  it("toctou stops on a closed stdout too, removes its temp directory, and exits 2", async () => {
    const child = await bin("toctou-epipe", ["toctou", "--mode", "race", "--attempts", "100000", "--seconds", "20"]);
    await until(async () => (await sandboxesIn(child.tmp)).length > 0, "the toctou directory");
    child.process.stdout?.destroy();
    const { code } = await child.exit;
    expect(code, child.stderr()).toBe(2);
    expect(child.stderr()).toMatch(/^workspace-gates: cannot write to stdout \(EPIPE\); output is incomplete$/m);
    expect(await sandboxesIn(child.tmp)).toEqual([]);
  }, CHILD_TIMEOUT_MS);

  it.each([
    ["a missing directory", (dir: string) => join(dir, "missing", "audit.json"), /ENOENT/],
    ["a directory", (dir: string) => dir, /EISDIR/],
  ])("refuses --json into %s before the run (exit 2, one line)", async (_what, path, cause) => {
    const file = path(scratch);
    const { code, stdout, stderr } = await cli(["audit", "--json", file, "--only", "isInside.posix", "--runs", "1"]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toMatch(new RegExp(`^audit: cannot write --json ${file}: .*${cause.source}.*\\n$`));
  });

  it("checks --json without touching an existing file, and without leaving a new one", async () => {
    const kept = join(scratch, "kept.json");
    await writeFile(kept, "earlier report\n");
    const fresh = join(scratch, "fresh", "audit.json");
    await mkdir(join(scratch, "fresh"));
    for (const file of [kept, fresh]) {
      // The check passes; the run then stops at a module that cannot load.
      const { code, stderr } = await cli(["audit", join(scratch, "missing.mjs"), "--json", file, "--runs", "1"]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^audit: cannot load /);
    }
    expect(await readFile(kept, "utf8")).toBe("earlier report\n");
    expect(await readdir(join(scratch, "fresh"))).toEqual([]);
  });
});

describe("progress on stderr", () => {
  it("is one plain line per property when stderr is not a terminal", async () => {
    const { stderr } = await cli(["audit", "--only", "isInside.posix,isInside.win32", "--runs", "3", "--seed", "1"]);
    expect(stderr).toMatch(/^audit: \[1\/2\] isInside\.posix passed \(3 runs, \d+\.\ds\)\naudit: \[2\/2\] isInside\.win32 passed \(3 runs, \d+\.\ds\)\n$/);
  });

  it("is one line redrawn in place on a terminal, erased at the end", async () => {
    const { stderr, stdout } = await cli(["audit", "--only", "isInside.posix,isInside.win32", "--runs", "3", "--seed", "1"], true);
    expect(stderr).toContain("\r\x1b[Kaudit [1/2] isInside.posix …");
    expect(stderr).toContain("\r\x1b[Kaudit [2/2] isInside.win32 …");
    expect(stderr.endsWith("\r\x1b[K")).toBe(true);
    expect(stderr).not.toContain("\n");
    expect(stdout).toMatch(/^audit: 3 passed, 0 failed, 0 skipped$/m);
  });
});
