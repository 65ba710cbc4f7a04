// A tree deeper than a path can name (past PATH_MAX, 4096 bytes on Linux) is removed all the same: by
// a sandbox's reset, by its removal, and at the end of an audit whose server made one. The audit's own
// ENAMETOOLONG was a finding against the target ("hardening broken") and left its sandboxes behind.
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { type AuditProperty, disposeSandboxes, poolSandboxes, sweepSandboxes } from "../src/kit/audit/runner/property.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { AuditFault, takeAuditFaults } from "../src/kit/sandbox/fault.js";
import { type Sandbox, createSandbox } from "../src/kit/sandbox/sandbox.js";
import { materialize } from "../src/kit/sandbox/tree.js";
import { removeTree } from "../src/kit/sandbox/remove.js";
import { leftIn, startCli } from "./support/child-cli.js";
import { served } from "./support/tools-server.js";

const DEPTH = 1_100;

let scratch: string;
beforeAll(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-deep-")));
});
afterAll(async () => {
  // GNU rm walks by descriptors; this file's own subject is what Node's rm cannot do.
  execFileSync("rm", ["-rf", scratch]);
});

/**
 * A chain of `depth` directories `deep/deep/…` in `under`, made a step at a time from inside it, by a
 * child process (a worker may not chdir; a shell's cd keeps a logical path, and fails past PATH_MAX).
 */
function chain(under: string, depth = DEPTH): void {
  const script = `const fs = require("node:fs"); process.chdir(process.argv[1]); for (let i = 0; i < ${depth}; i++) { fs.mkdirSync("deep"); process.chdir("deep"); } fs.writeFileSync("end.txt", "end");`;
  execFileSync(process.execPath, ["-e", script, under]);
}

describe("removeTree", () => {
  it("removes a chain of directories deeper than a path can name, where Node's rm fails", async () => {
    const top = join(scratch, "by-hand");
    await mkdir(top);
    chain(top);
    await expect(rm(top, { recursive: true, force: true })).rejects.toThrow(/ENAMETOOLONG/);
    removeTree(top);
    expect(existsSync(top)).toBe(false);
  });

  it("removes a chain that climbs from several branches, names not valid UTF-8 included", async () => {
    const top = join(scratch, "branches");
    await mkdir(join(top, "one"), { recursive: true });
    await mkdir(join(top, "two"), { recursive: true });
    chain(join(top, "one"), 900);
    chain(join(top, "two"), 900);
    await rename(join(top, "two"), Buffer.from([...Buffer.from(`${top}/`), 0xff, 0x41]));
    expect((await readdir(top, { encoding: "buffer" })).some((name) => name.equals(Buffer.from([0xff, 0x41])))).toBe(true);
    removeTree(top);
    expect(existsSync(top)).toBe(false);
  });
});

describe("a sandbox whose workspace holds a chain deeper than PATH_MAX", () => {
  it("is emptied by reset, and removed whole by dispose", async () => {
    const box = await createSandbox("workspace-gates-deep-box-", { parent: scratch });
    chain(box.root);
    expect(await box.reset()).toBe(true);
    expect(await readdir(box.root)).toEqual([]);
    chain(box.root);
    await box.dispose();
    expect(existsSync(box.base)).toBe(false);
  });
});

describe("an audit of a server that makes a chain deeper than PATH_MAX at every write", () => {
  it("judges the server (no finding of the audit's own ENAMETOOLONG) and leaves nothing in the temp folder", { timeout: 180_000 }, async () => {
    const tmp = join(scratch, "tmp");
    await mkdir(tmp);
    const { ended } = startCli(
      ["audit", "--runs", "3", "--seed", "1", "--only", "containment.write", "--mcp", "--mapping", "fixtures/mcp/tools-server.json", "--", ...served("reference", "--deep-dirs", String(DEPTH))],
      tmp,
    );
    const { code, stdout, stderr } = await ended;
    expect(`${stdout}${stderr}`).not.toMatch(/ENAMETOOLONG/);
    expect(stdout).toMatch(/containment\.write\s+passed/);
    expect(code, stderr).toBe(0);
    expect(await leftIn(tmp)).toEqual([]);
  });
});

describe("an error of the audit's own", () => {
  it("laying out a tree is an AuditFault, not an error of the case", async () => {
    const box = await createSandbox("workspace-gates-fault-box-", { parent: scratch });
    try {
      // A workspace that is a file: no entry can be made in it, whatever the tree.
      const file = join(box.scratch, "not-a-directory");
      await writeFile(file, "");
      await expect(materialize([{ kind: "dir", at: ["a"] }], { ...box, root: file })).rejects.toBeInstanceOf(AuditFault);
    } finally {
      await box.dispose();
    }
  });

  it("is recorded for the verdict, and never fails the property it met", async () => {
    takeAuditFaults();
    const property: AuditProperty<number> = {
      id: "test.auditFault",
      gate: "workspacePath",
      kind: "guarantee",
      title: "a case that meets the audit's own fault",
      needs: [],
      consequence: "hardening broken",
      threat: () => "the model's input alone",
      arbitrary: fc.nat(3),
      check: async () => {
        throw new AuditFault("the audit could not lay out a/b in the workspace: ENOSPC");
      },
      render: (value) => String(value),
    };
    const result = await runProperty(property, { label: "a target never called" }, { seed: 1, runs: 3 });
    expect(result.status).toBe("passed");
    expect(result.cases).toBe(0);
    expect(takeAuditFaults()).toEqual(Array(3).fill("the audit could not lay out a/b in the workspace: ENOSPC"));
  });
});

describe("an audit whose own layout of a tree fails", () => {
  it("exits 2 naming the audit, with no finding against the target, and leaves nothing in the temp folder", { timeout: 180_000 }, async () => {
    const tmp = join(scratch, "tmp-fault");
    await mkdir(tmp);
    // The chapter's tools, in a process whose every link made in a workspace fails with EIO: the
    // audit's own layout of a tree, never a call of the tools (they make no links).
    const module = join(scratch, "links-fail.mjs");
    await writeFile(
      module,
      `import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const real = fs.symlinkSync;
fs.symlinkSync = (target, path, ...rest) => {
  if (String(path).includes("/g/g/g/g/ws/")) throw Object.assign(new Error("EIO: i/o error, symlink '" + String(path) + "'"), { code: "EIO" });
  return real(target, path, ...rest);
};
syncBuiltinESMExports();
export { createWorkspaceTools } from ${JSON.stringify(join(process.cwd(), "src/tools/workspace-tools.ts"))};
`,
    );
    const { ended } = startCli(["audit", module, "--only", "containment.read", "--runs", "5", "--seed", "1"], tmp);
    const { code, stdout, stderr } = await ended;
    expect(stderr).toMatch(/^audit: the audit failed on its own, not through the target, so the verdict cannot stand: the audit could not lay out \S+ in the workspace: EIO: i\/o error, symlink/m);
    // The property judged nothing (coverage says read was not attacked, which is so); it found nothing against the tools.
    expect(stdout).toMatch(/^workspacePath\s+containment\.read\s+passed\s+\d+\s+0\s/m);
    expect(code).toBe(2);
    expect(await leftIn(tmp)).toEqual([]);
  });
});

describe("a sandbox a server still writes in when it is disposed", () => {
  // CI once ended an audit with exit 2, "the audit failed on its own … ENOTEMPTY … scratch/tmp/tsx-0":
  // the server's TMPDIR is in its sandbox, and tsx was still writing its cache there as the sandbox
  // was removed. Only what the sweep, after the servers ended, cannot remove is the audit's fault.
  it("is removed by the sweep once the writer has stopped, and no fault of the audit's is recorded", { timeout: 60_000 }, async () => {
    takeAuditFaults();
    let box: Sandbox | undefined;
    await poolSandboxes(["ws"], (pooled) => (box = pooled));
    if (box === undefined) throw new Error("no sandbox was pooled");
    const tmp = join(dirname(box.outside), "scratch", "tmp");
    // As tsx does: its cache directory made again, parents and all, and files written into it.
    // Many files first, so that the removal takes long enough for the writers to come back under it.
    for (let dir = 0; dir < 40; dir++) {
      await mkdir(join(tmp, "cache", String(dir)), { recursive: true });
      await Promise.all(Array.from({ length: 50 }, (_, file) => writeFile(join(tmp, "cache", String(dir), String(file)), "")));
    }
    const writers = [1, 2, 3, 4].map((writer) =>
      // A group of its own, killed whole: a `mkdir -p` the shell forked would outlive the shell alone
      // and make the directory again after the sweep (seen once in a full run).
      spawn("sh", ["-c", `while :; do mkdir -p '${tmp}/cache/${writer}/a/b' && for i in 1 2 3 4 5 6 7 8; do : > '${tmp}/cache/${writer}/a/b/f'$i; done; done`], { stdio: "ignore", detached: true }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await disposeSandboxes();
    const exited = writers.map((writer) => new Promise((resolve) => writer.once("exit", resolve)));
    for (const writer of writers) process.kill(-(writer.pid as number), "SIGKILL");
    await Promise.all(exited);
    // The group's last forked child may still be ending: wait until no process of any group is left.
    for (const writer of writers) while (groupAlive(writer.pid as number)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(takeAuditFaults()).toEqual([]);
    sweepSandboxes();
    expect(existsSync(box.base)).toBe(false);
    expect(takeAuditFaults()).toEqual([]);
  });
});

/** Whether any process of the group `id` is still there. */
function groupAlive(id: number): boolean {
  try {
    process.kill(-id, 0);
    return true;
  } catch {
    return false;
  }
}
