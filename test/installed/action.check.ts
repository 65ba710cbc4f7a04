/**
 * The action (action.yml) and the README's workflows, run step by step as a runner runs them
 * (test/support/action-runner.ts): the action builds the package from a checkout of this repository,
 * packs it, installs the tarball and runs its bin in a user's repository. A fork with a planted
 * escape fails the job (exit 1) with a SARIF result located at the module for every finding; a correct
 * module written otherwise passes (exit 0), its departures from the reference's conventions listed as
 * warnings. The action's YAML and both workflows pass @action-validator/core's schema checks.
 * .ci/run runs it (`npm run test:installed`); it needs the npm registry, for npm ci and the install.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { validateAction, validateWorkflow } from "@action-validator/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { findingFingerprint } from "../../src/kit/findings/sarif.js";
import { type JobRun, Runner, type Step } from "../support/action-runner.js";

const run = promisify(execFile);

/** This repository's action, as the README's workflows name it. */
const ACTION_USES = /^OWNER\/workspace-gates@v\d/;
const MODULE = "audit-adapter.mjs";

let scratch: string;
let runner: Runner;
let privateTmp: string;
let workflows: { module: { jobs: { audit: { steps: Step[] } } }; mcp: { jobs: { audit: { steps: Step[] } } } };

interface Sarif {
  runs: { results: { ruleId: string; level: string; locations?: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[]; suppressions?: unknown[] }[] }[];
}

/** The YAML blocks of the README, in order: the workflow for a tools module, then for an MCP server. */
async function readmeWorkflows(): Promise<string[]> {
  return [...(await readFile("README.md", "utf8")).matchAll(/^```yaml\n([^]*?)^```$/gm)].map(([, yaml = ""]) => yaml);
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "workspace-gates-action-"));
  privateTmp = join(scratch, "tmp");
  const [checkout, workspace, temp] = ["action", "workspace", "runner-temp"].map((name) => join(scratch, name)) as [string, string, string];
  for (const dir of [checkout, workspace, temp, privateTmp]) await mkdir(dir);
  // What the runner fetches for `uses: OWNER/workspace-gates@ref`: the repository's files at that ref.
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { maxBuffer: 1 << 24 });
  for (const file of stdout.split("\0").filter((name) => name !== "")) {
    await mkdir(join(checkout, dirname(file)), { recursive: true });
    await copyFile(file, join(checkout, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error; // deleted in the work tree, not yet in the index
    });
  }
  // The user's repository: a package whose lockfile `npm ci` installs (it has no dependencies).
  await writeFile(join(workspace, "package.json"), JSON.stringify({ name: "user-tools", private: true, type: "module" }));
  await run("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund"], { cwd: workspace });
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")));
  runner = new Runner(checkout, ACTION_USES, workspace, temp, { ...env, TMPDIR: privateTmp });
  const [module = "", mcp = ""] = await readmeWorkflows();
  workflows = { module: parse(module), mcp: parse(mcp) };
}, 120_000);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const ownWording = () => readFile("fixtures/secure/own-wording.mjs", "utf8");

/** own-wording.mjs with the similar-prefix mistake planted in its containment test. */
async function forkWithEscape(): Promise<string> {
  const source = await ownWording();
  const planted = source.replace(/^export function isInside\(root, path, pathApi = nodePath\) \{\n[^]*?^\}$/m, "export function isInside(root, path) {\n  return path.startsWith(root);\n}");
  expect(planted).not.toBe(source);
  return planted;
}

async function runModuleWorkflow(module: string): Promise<JobRun> {
  await writeFile(join(runner.workspace, MODULE), module);
  await rm(join(runner.workspace, "workspace-gates.sarif"), { force: true });
  return runner.runJob(workflows.module.jobs.audit.steps);
}

const sarifOf = async (file: string) => JSON.parse(await readFile(file, "utf8")) as Sarif;

describe("the action's YAML and the README's workflows", () => {
  it("pass the schema checks of @action-validator/core", async () => {
    expect(validateAction(await readFile("action.yml", "utf8")).errors).toEqual([]);
    const readme = await readmeWorkflows();
    expect(readme).toHaveLength(2);
    for (const workflow of readme) expect(validateWorkflow(workflow).errors).toEqual([]);
  });

  it("pass every input to a script through env:, never pasted into it", async () => {
    const action = parse(await readFile("action.yml", "utf8")) as { runs: { steps: Step[] } };
    for (const step of action.runs.steps) expect(step.run ?? "", step.name).not.toContain("${{");
  });

  it("name this repository's action with inputs it has, in both workflows", () => {
    for (const workflow of [workflows.module, workflows.mcp]) {
      const uses = workflow.jobs.audit.steps.filter((step) => step.uses !== undefined && ACTION_USES.test(step.uses));
      expect(uses).toHaveLength(1);
    }
    expect(workflows.module.jobs.audit.steps.find((step) => step.uses?.startsWith("OWNER/"))?.with).toMatchObject({ module: MODULE });
    expect(workflows.mcp.jobs.audit.steps.find((step) => step.uses?.startsWith("OWNER/"))?.with).toHaveProperty("mcp-command");
  });
});

describe("the README's workflow for a tools module, run as a runner runs it", () => {
  it("fails the job on a fork with a planted escape (exit 1): SARIF located at the module for every result, uploaded, outputs set", async () => {
    const fork = await forkWithEscape();
    const job = await runModuleWorkflow(fork);
    expect(job.failed, job.log).toEqual({ step: "Verdict", code: 1 });
    const outputs = Object.values(job.actionOutputs)[0] ?? {};
    expect(outputs).toMatchObject({ verdict: "failed", "exit-code": "1" });
    expect(Number(outputs.failed)).toBeGreaterThan(0);
    const counts = JSON.parse(outputs.counts ?? "{}") as Record<string, number>;
    expect((counts["outside changed"] ?? 0) + (counts["outside read"] ?? 0), outputs.counts).toBeGreaterThan(0);
    const sarif = await sarifOf(join(runner.workspace, "workspace-gates.sarif"));
    const results = sarif.runs[0]?.results ?? [];
    expect(results.length).toBeGreaterThan(0);
    // Each result at what it is about: an export's line, or the line that names the tool its call broke.
    const lines = fork.split("\n");
    const lineOf = (name: string) => lines.findIndex((line) => line.startsWith(`export function ${name}(`)) + 1;
    for (const result of results) {
      const at = result.locations?.[0]?.physicalLocation;
      expect(at?.artifactLocation, result.ruleId).toEqual({ uri: MODULE });
      const named = lines[(at?.region?.startLine ?? 0) - 1] ?? "";
      expect(named, result.ruleId).toMatch(/^export (async )?function (isInside|workspacePath|createWorkspaceTools)\(|"(read|write|bash)"/);
      if (result.ruleId.startsWith("isInside.")) expect(at?.region?.startLine, result.ruleId).toBe(lineOf("isInside"));
    }
    const [upload] = job.used.filter((used) => used.uses.startsWith("github/codeql-action/upload-sarif@"));
    expect(upload?.with).toMatchObject({ category: "workspace-gates" });
    expect((await sarifOf(upload?.with.sarif_file as string)).runs[0]?.results.map((result) => result.ruleId)).toEqual(results.map((result) => result.ruleId));
    // No sandbox left behind (the build's tsx keeps its cache there, as it does on a runner).
    expect((await readdir(privateTmp)).filter((name) => name.startsWith("workspace-gates"))).toEqual([]);
  }, 600_000);

  it("passes a correct module written otherwise (exit 0), listing its departures from the conventions as warnings", async () => {
    const job = await runModuleWorkflow(await ownWording());
    expect(job.failed, job.log).toBeUndefined();
    const outputs = Object.values(job.actionOutputs)[0] ?? {};
    expect(outputs).toMatchObject({ verdict: "passed", "exit-code": "0", failed: "0" });
    expect(Number(outputs.warnings)).toBeGreaterThan(0);
    expect(job.log).toMatch(/^warnings, which do not fail the run \(the reference's conventions, departed from with no harm seen; --strict fails on them\): .*bashLimits\.output \(convention differs\)/m);
    // The action installs memfs, an optional peer: nothing is left unchecked for want of it.
    expect(job.log).not.toMatch(/^not checked: /m);
    const results = (await sarifOf(join(runner.workspace, "workspace-gates.sarif"))).runs[0]?.results ?? [];
    expect(results.filter((result) => result.level === "error")).toEqual([]);
  }, 600_000);

  it("leaves a suppressed finding out of what it uploads to code scanning, and the run says it set it aside", async () => {
    // The package the workflows above built: a later use of the action in the job finds it.
    const build = await runner.runActionStep("package", {}, {});
    expect(build.job.log).toContain("workspace-gates: built earlier in this job");
    const outputsOfBuild = build.outputs;
    await writeFile(join(runner.workspace, MODULE), await forkWithEscape());
    const fingerprint = findingFingerprint(MODULE, "isInside.posix", "hardening broken");
    await writeFile(join(runner.workspace, "suppressions.json"), JSON.stringify({ suppressions: [{ fingerprint, reason: "callers never pass a sibling" }] }));
    const bin = outputsOfBuild.bin as string;
    const audit = await run(bin, ["audit", MODULE, "--only", "isInside.posix,isInside.win32", "--seed", "1", "--runs", "50", "--suppressions", "suppressions.json", "--sarif", "suppressed.sarif"], {
      cwd: runner.workspace,
      env: runner.env,
    }).catch((error: { code: number; stdout: string }) => error);
    expect(audit.stdout).toContain("suppressions (suppressions.json): 1 finding set aside\n  isInside.posix (hardening broken): callers never pass a sibling\n");
    const { outputs } = await runner.runActionStep("upload-file", { "upload-sarif": "true" }, { audit: { sarif: "suppressed.sarif" }, package: outputsOfBuild });
    const kept = (await sarifOf(join(runner.workspace, "suppressed.sarif"))).runs[0]?.results ?? [];
    expect(kept.map((result) => [result.ruleId, result.suppressions?.length])).toEqual([
      ["isInside.posix", 1],
      ["isInside.win32", 0],
    ]);
    expect((await sarifOf(outputs.file as string)).runs[0]?.results.map((result) => result.ruleId)).toEqual(["isInside.win32"]);
  }, 120_000);

  it("points every SARIF result at the sarif-location input: a repository's own file, for a server in any language", async () => {
    const { outputs: build } = await runner.runActionStep("package", {}, {});
    await writeFile(join(runner.workspace, MODULE), await forkWithEscape());
    const inputs = { module: MODULE, sarif: "located.sarif", "sarif-location": "server/main.py", time: "10", args: ["--only", "isInside.posix", "--seed", "1"].join("\n") };
    const { outputs, job } = await runner.runActionStep("audit", inputs, { package: build });
    expect(outputs, job.log).toMatchObject({ verdict: "failed", "exit-code": "1" });
    const results = (await sarifOf(join(runner.workspace, "located.sarif"))).runs[0]?.results ?? [];
    expect(results.map((result) => result.locations?.[0]?.physicalLocation.artifactLocation.uri)).toEqual(["server/main.py"]);
  }, 600_000);

  it("runs a user's own workflow on their own repository with npm run action:local, leaving that repository as it was", async () => {
    const repository = join(scratch, "users-repository");
    await mkdir(join(repository, ".github", "workflows"), { recursive: true });
    await run("git", ["init", "-q"], { cwd: repository });
    await writeFile(join(repository, "package.json"), JSON.stringify({ name: "users-tools", private: true, type: "module" }));
    await run("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund"], { cwd: repository });
    // A fork with an escape: it fails within seconds, whatever the machine's load.
    await writeFile(join(repository, MODULE), await forkWithEscape());
    const [readmeWorkflow = ""] = await readmeWorkflows();
    const workflow = join(repository, ".github", "workflows", "audit.yml");
    await writeFile(workflow, readmeWorkflow.replace("OWNER/workspace-gates", "someone/workspace-gates"));
    const before = (await readdir(repository)).sort();
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")));
    const failed = await run("npx", ["tsx", "scripts/action-local.ts", "--workflow", workflow, "--repo", repository], { env: { ...env, TMPDIR: privateTmp }, maxBuffer: 1 << 24 }).then(
      () => ({ code: 0, stdout: "" }),
      (error: { code: number; stdout: string }) => error,
    );
    const { stdout } = failed;
    expect(failed.code, stdout).toBe(1);
    expect(stdout).toContain('job audit: failed at "Verdict" (exit 1)\n');
    expect(stdout).toMatch(/^outputs of someone\/workspace-gates@v[\d.]+: .*"verdict":"failed"/m);
    expect(stdout).toContain("not run here: actions/checkout@v4");
    expect((await readdir(repository)).sort()).toEqual(before);
  }, 600_000);

  it("builds with only what the build needs: none of the development tools (Stryker, puppeteer, a Chromium, vitest)", async () => {
    const { outputs: build } = await runner.runActionStep("package", {}, {});
    const installed = await readdir(join(build.work as string, "build", "node_modules"));
    expect(installed).toEqual(expect.arrayContaining(["typescript", "tsx", "@types", "@modelcontextprotocol", "fast-check", "memfs", "@resvg"]));
    for (const dev of ["@stryker-mutator", "puppeteer-core", "@sparticuz", "vitest", "@vitest", "@microsoft"]) expect(installed, dev).not.toContain(dev);
  }, 600_000);

  it("gives no verdict but an error (exit 2) when neither a module nor a server, or both, are given", async () => {
    const { outputs: build } = await runner.runActionStep("package", {}, {});
    for (const inputs of [{}, { module: MODULE, "mcp-command": "node server.js" }]) {
      const { outputs, job } = await runner.runActionStep("audit", inputs, { package: build });
      expect(outputs, job.log).toMatchObject({ verdict: "error", "exit-code": "2" });
      expect(job.log).toContain("::error title=workspace-gates::give exactly one of the inputs module and mcp-command");
    }
  }, 120_000);
});
