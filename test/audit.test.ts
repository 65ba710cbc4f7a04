// `workspace-gates audit` end to end: every guarantee on the reference and on the verified tools, the
// classic mistakes caught, replay commands that reproduce the shrunk case, and the fork baseline.
import fc from "fast-check";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { notTheChapters } from "./support/chapter-surface.js";
import { COVERAGE_ID } from "../src/kit/audit/coverage.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { disposeSandboxes } from "../src/kit/audit/runner/property.js";
import { type AuditTarget, referenceTarget } from "../src/kit/operations/target.js";
import { cli as runCli, useScratch } from "./support/cli.js";

const seed = fc.readConfigureGlobal().seed ?? Math.floor(Math.random() * 0x7fffffff);

const cli = (...argv: string[]) => runCli(argv);
const scratchDir = useScratch("workspace-gates-audit-test-");


describe("the audit on the reference implementation", () => {
  let reference: AuditTarget;
  beforeAll(async () => {
    reference = await referenceTarget();
  });

  it.each(PROPERTIES.filter((property) => property.kind !== "limit" && !notTheChapters(property.id)).map((property) => [property.id, property] as const))(
    "%s holds",
    async (_id, property) => {
      const result = await runProperty(property, reference, { seed, runs: 25 });
      expect(result, `seed ${seed}: ${result.reason}\n${result.counterexample}`).toMatchObject({ status: "passed", runs: expect.any(Number) });
      expect(result.runs).toBeGreaterThan(0);
    },
  );

  it.each(PROPERTIES.filter((property) => notTheChapters(property.id)).map((property) => [property.id, property] as const))(
    "%s is not applicable: the chapter's tools do not do that",
    async (_id, property) => {
      const result = await runProperty(property, reference, { seed, runs: 25 });
      expect(result).toMatchObject({ status: "not-applicable", runs: 0, reason: expect.stringMatching(/^the target offers no tool that |^no protected paths were given/) });
    },
  );

  it.each(PROPERTIES.filter((property) => property.kind === "limit").map((property) => [property.id, property] as const))(
    "%s fails, as the known limit SECURITY.md documents",
    async (_id, property) => {
      const result = await runProperty(property, reference, { seed, runs: 25 });
      expect(result.status).toBe("failed");
    },
  );
});

describeNeeding(LINUX_PROCFS, "the audit on the verified tools (src/verified/contract.ts)", () => {
  // Every property at --runs 20, the creating ones with a tree of links to every twin: 25 s on two busy workers.
  it("passes every guarantee, and closes the hardlink limit the chapter's tools fail", { timeout: 120_000 }, async () => {
    const json = join(scratchDir.path, "verified.json");
    const { code, stdout } = await cli("audit", "src/verified/contract.ts", "--runs", "20", "--seed", String(seed), "--json", json);
    expect(code, stdout).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report.target).toBe("src/verified/contract.ts");
    expect(report.results.map((result) => [result.id, result.status])).toEqual([
      ...PROPERTIES.map((property) => [property.id, notTheChapters(property.id) ? "not-applicable" : "passed"]),
      [COVERAGE_ID, "passed"],
    ]);
    expect(stdout).toMatch(/^workspacePath\s+limits\.hardlink\s+passed \(limit closed\)\s/m);
  });
});

describe("sandboxes kept between runs", () => {
  it("are reused by the next run, not made anew, and removed only when disposed", async () => {
    const before = process.env.TMPDIR;
    process.env.TMPDIR = await mkdtemp(join(tmpdir(), "workspace-gates-kept-"));
    const made = async () => (await readdir(process.env.TMPDIR as string)).filter((name) => name.startsWith("workspace-gates-audit-")).sort();
    try {
      const property = PROPERTIES.find((candidate) => candidate.id === "truncation.read");
      if (property === undefined) throw new Error("no truncation.read");
      const reference = await referenceTarget();
      expect((await runProperty(property, reference, { seed: 1, runs: 5, keepSandboxes: true })).status).toBe("passed");
      const first = await made();
      expect(first.length).toBeGreaterThan(0);
      expect((await runProperty(property, reference, { seed: 1, runs: 5, firstRun: 5, keepSandboxes: true })).status).toBe("passed");
      expect(await made(), "the second run made no sandbox of its own").toEqual(first);
      await disposeSandboxes();
      expect(await made()).toEqual([]);
      expect((await runProperty(property, reference, { seed: 1, runs: 5 })).status).toBe("passed");
      expect(await made(), "a run that keeps nothing leaves nothing").toEqual([]);
    } finally {
      await rm(process.env.TMPDIR as string, { recursive: true, force: true });
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });
});

describe("the audit catches the classic mistakes", () => {
  it.each([
    ["similar-prefix", ["isInside.posix", "isInside.win32", "containment.workspacePath", "precision.workspacePath"]],
    ["lexical-only", ["precision.workspacePath", "containment.write"]],
  ])("fails fixtures/vulnerable/%s.ts, caught by %j", async (name, catchers) => {
    const json = join(scratchDir.path, `${name}.json`);
    const only = ["--only", catchers.join(",")];
    const { code, stdout } = await cli("audit", `fixtures/vulnerable/${name}.ts`, ...only, "--seed", "1", "--runs", "50", "--json", json);
    expect(code, stdout).toBe(1);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    const failed = report.results.filter((result) => result.status === "failed" && result.kind === "guarantee").map((result) => result.id);
    expect(failed.sort()).toEqual([...catchers].sort());
  });

  it("prints a replay command that reproduces the shrunk case", async () => {
    const json = join(scratchDir.path, "replay.json");
    await cli("audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.write", "--seed", "3", "--json", json);
    const [failure] = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results;
    expect(failure?.replay).toMatch(/^npx workspace-gates audit fixtures\/vulnerable\/similar-prefix\.ts --only containment\.write --seed 3 --path \S+$/);
    const replayArgs = (failure?.replay as string).split(" ").slice(2);
    const again = await cli(...replayArgs);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain((failure?.counterexample as string).split("\n").join("\n      "));
  });
});

describe("bashLimits.output", () => {
  /** A target whose bash answers `answer` to every command; read and write are the reference's. */
  const answering = async (answer: string): Promise<AuditTarget> => {
    const reference = await referenceTarget();
    return {
      label: "canned bash",
      createWorkspaceTools: (root) => {
        const [read, write, bash] = reference.createWorkspaceTools!(root);
        return [read!, write!, { spec: bash!.spec, execute: async () => ({ content: answer, isError: true }) }];
      },
    };
  };
  const stdoutOver = "bash: maxBuffer exceeded: stdout passed 65536 bytes; the command was killed";
  const property = PROPERTIES.find((candidate) => candidate.id === "bashLimits.output")!;

  // Failed the reference at load 4 (the kill matrix, beside a mutation run): the command floods stderr,
  // then stdout, and the tool read stdout over the limit first. Either stream that flooded is right.
  it("accepts either stream of a flood on both (regression: stderr then stdout, stdout named)", async () => {
    const bothStreams = { kind: "flood", streams: ["stderr", "stdout"], bytes: 66_431 };
    await expect(property.check(await answering(stdoutOver), bothStreams)).resolves.toBeUndefined();
  });

  it("holds a far flood on both streams to naming the first: the second cannot start before the tool reads it past the limit", async () => {
    const farFirst = { kind: "flood", streams: ["stderr", "stdout"], bytes: 16 * 1024 * 1024 };
    await expect(property.check(await answering(stdoutOver), farFirst)).rejects.toThrow(/the stream that flooded \(stderr\)/);
  });

  it("refuses a stream that did not flood", async () => {
    const stderrOnly = { kind: "flood", streams: ["stderr"], bytes: 66_431 };
    await expect(property.check(await answering(stdoutOver), stderrOnly)).rejects.toThrow(/does not name the limit \(65536 bytes\) and the stream that flooded \(stderr\)/);
  });
});

describe("workspace-gates audit, the command", () => {
  it("exits 0 on the reference and prints one row per property and the summary", async () => {
    const { code, stdout } = await cli("audit", "--runs", "3", "--seed", "7", "--only", "isInside.posix,fields.tools,limits.hardlink");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^isInside\s+isInside\.posix\s+passed\s+3\s+3\s+\d+\.\ds$/m);
    expect(stdout).toMatch(/^workspacePath\s+limits\.hardlink\s+known limit\s+1\s/m);
    expect(stdout).toContain("known limits (the reference fails them too, by design: SECURITY.md): limits.hardlink");
    expect(stdout).toMatch(/^audit: 3 passed, 0 failed, 0 skipped, 1 known limit$/m);
  });

  it("skips what a module does not export, and audits the rest", async () => {
    const module = join(scratchDir.path, "only-is-inside.mjs");
    await writeFile(module, 'export { isInside } from "' + join(process.cwd(), "src/gates/is-inside.ts") + '";\n');
    const json = join(scratchDir.path, "only.json");
    const { code } = await cli("audit", module, "--runs", "5", "--seed", "1", "--json", json);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(code).toBe(0);
    const judged = report.results.filter((result) => result.status !== "skipped" && result.status !== "not-applicable");
    expect(judged.map((result) => result.id)).toEqual(["isInside.posix", "isInside.win32"]);
    expect(report).toMatchObject({ target: module, seed: 1, runs: 5 });
  });

  // A module of tools without read (the counterexamples' lexical surface) ended in exit 2: the pace
  // was measured on read alone.
  it("audits a module that offers no read tool, its pace measured on a tool it has", async () => {
    const module = join(scratchDir.path, "only-stat.mjs");
    const surface = join(process.cwd(), "fixtures/surface/surface.ts");
    await writeFile(module, `import { createWorkspaceTools as all } from "${surface}";\nexport const createWorkspaceTools = (root) => all(root).filter((tool) => tool.spec.name === "stat");\n`);
    const { code, stdout, stderr } = await cli("audit", module, "--only", "containment.stat", "--runs", "5", "--seed", "1");
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/^workspacePath\s+containment\.stat\s+passed/m);
  });

  it.each([
    [["audit", "--runs", "0"], /--runs must be at least 1/],
    [["audit", "--runs", "many"], /--runs must be an integer/],
    [["audit", "--only", "nope"], /unknown property: nope\n/],
    [["audit", "--only", "containment.reed,isInside.posix"], /^audit: unknown property: containment\.reed \(did you mean containment\.read\?\)\n/],
    [["audit", "--frobnicate"], /^audit: unknown flag --frobnicate\n/],
    [["audit", "a.ts", "b.ts"], /at most one MODULE/],
    [["audit", "--path", "0:1", "--only", "fields.tools"], /--path replays one run/],
    [["nope"], /unknown command: nope/],
  ])("exits 2 on %j", async (argv, message) => {
    const { code, stderr } = await cli(...argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it.each([
    ["a default export only", "default.mjs", "export default { isInside: () => true };\n", /found default\)/],
    ["CommonJS module.exports = {}", "empty.cjs", "module.exports = {};\n", /found default\)/],
    ["no exports at all", "nothing.mjs", "\n", /found no exports\)/],
    ["isInside = 42", "number.mjs", "export const isInside = 42;\n", /isInside is number, not a function/],
    ["a usable export next to a broken one", "mixed.mjs", "export const isInside = () => true;\nexport const workspacePath = null;\n", /workspacePath is null, not a function/],
  ])("refuses %s (exit 2), naming the exports it looked for", async (_what, name, source, detail) => {
    const module = join(scratchDir.path, name);
    await writeFile(module, source);
    const { code, stdout, stderr } = await cli("audit", module, "--runs", "1");
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toMatch(/^audit: cannot audit .*looked for isInside, workspacePath, createWorkspaceTools/);
    expect(stderr).toMatch(detail);
  });

  it("exits 2 when every selected property is skipped: nothing was checked", async () => {
    const module = join(scratchDir.path, "inside-only.mjs");
    await writeFile(module, "export const isInside = () => false;\n");
    const { code, stdout, stderr } = await cli("audit", module, "--only", "containment.read,fields.tools", "--runs", "1");
    expect(code).toBe(2);
    expect(stdout).toMatch(/^audit: 0 passed, 0 failed, 2 skipped, 1 not applicable$/m);
    expect(stderr).toMatch(new RegExp(`^audit: nothing was checked: every selected property needs an export ${module} does not have$`, "m"));
  });

  it("exits 2, not 0, when only coverage was judged: a passing coverage checks nothing by itself", async () => {
    const module = join(scratchDir.path, "tools-only.mjs");
    await writeFile(module, `export { createWorkspaceTools } from ${JSON.stringify(join(process.cwd(), "src/index.ts"))};\n`);
    const { code, stdout, stderr } = await cli("audit", module, "--only", "isInside.posix", "--runs", "1");
    expect(stdout).toMatch(/^coverage\s+coverage\.tools\s+passed\s/m);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^audit: nothing was checked/m);
  });

  it("exits 2 when the module cannot be loaded", async () => {
    const broken = join(scratchDir.path, "broken.mjs");
    await writeFile(broken, "throw new Error('cannot even start');\n");
    for (const module of [broken, join(scratchDir.path, "missing.mjs")]) {
      const { code, stderr } = await cli("audit", module, "--runs", "1");
      expect(code).toBe(2);
      expect(stderr).toMatch(/^audit: cannot load /);
    }
  });

  it("says that a module that is not there is missing, naming the user's file and none of the kit's", async () => {
    const { code, stderr } = await cli("audit", "./nope.mjs", "--runs", "1");
    expect(code).toBe(2);
    expect(stderr).toBe(`audit: cannot load ./nope.mjs: no such file: ${resolve("nope.mjs")}\n`);
  });
});

describe("the fork baseline", () => {
  it("is committed for every property: guarantees passed, known limits failed", async () => {
    const baseline = JSON.parse(await readFile("fixtures/baseline.json", "utf8")) as JsonReport;
    expect(baseline.results.map((result) => result.id), "regenerate with npm run baseline").toEqual([...PROPERTIES.map((property) => property.id), COVERAGE_ID]);
    for (const result of baseline.results) expect(result.status, result.id).toBe(result.kind === "limit" ? "failed" : notTheChapters(result.id) ? "not-applicable" : "passed");
  });

  it("passes the reference against its own baseline", { timeout: 120_000 }, async () => {
    const { code, stdout } = await cli("audit", "--baseline", "fixtures/baseline.json", "--runs", "5", "--seed", "2");
    expect(code, stdout).toBe(0);
    expect(stdout).toContain("against baseline fixtures/baseline.json:\n  regressions (passed there, failed or skipped here): none\n");
  });

  it("fails a vulnerable fork and names its regressions", async () => {
    const { code, stdout } = await cli(
      "audit",
      "fixtures/vulnerable/similar-prefix.ts",
      "--baseline",
      "fixtures/baseline.json",
      "--only",
      "isInside.posix,isInside.win32,truncation.read",
      "--seed",
      "1",
      "--runs",
      "20",
    );
    expect(code).toBe(1);
    expect(stdout).toContain("regressions (passed there, failed or skipped here): isInside.posix, isInside.win32\n");
  });

  it("counts a property the baseline passed and this module skips as a regression", async () => {
    const module = join(scratchDir.path, "inside-only-for-baseline.mjs");
    await writeFile(module, 'export { isInside } from "' + join(process.cwd(), "src/gates/is-inside.ts") + '";\n');
    const only = ["--only", "isInside.posix,containment.read"];
    const { code, stdout } = await cli("audit", module, "--baseline", "fixtures/baseline.json", ...only, "--runs", "5", "--seed", "1");
    expect(code, stdout).toBe(1);
    expect(stdout).toContain("regressions (passed there, failed or skipped here): containment.read\n");
  });

  it("reports a closed limit as newly passing, which is no regression", async () => {
    const module = join(scratchDir.path, "hardlink-closed.mjs");
    await writeFile(module, `export { createVerifiedWorkspaceTools as createWorkspaceTools } from "${join(process.cwd(), "src/verified/verified-tools.ts")}";\n`);
    const { code, stdout } = await cli("audit", module, "--baseline", "fixtures/baseline.json", "--only", "limits.hardlink", "--runs", "10", "--seed", "1");
    expect(code, stdout).toBe(0);
    expect(stdout).toContain("newly passing (failed there, pass here): limits.hardlink\n");
  });

  it("exits 2 on a baseline that is not an audit report", async () => {
    const bogus = join(scratchDir.path, "bogus.json");
    await writeFile(bogus, '{"results": [{"name": "x"}]}');
    const { code, stderr } = await cli("audit", "--baseline", bogus, "--runs", "1", "--only", "isInside.posix");
    expect(code).toBe(2);
    expect(stderr).toMatch(/is not an audit JSON report/);
  });
});
