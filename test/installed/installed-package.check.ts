/**
 * The package the way users meet it: `npm pack`, installed into a fresh project that has none of this
 * repository's devDependencies, and driven through `node_modules/.bin/workspace-gates`. .ci/run runs
 * it (`npm run test:installed`); it needs the npm registry, for the package's own dependencies.
 *
 * Every command runs with a private TMPDIR that must be empty afterwards: no audit leaves a sandbox.
 * The races, which need the machine to themselves, are in race.check.ts.
 */
import { copyFile, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TSX_MISSING } from "../../src/kit/operations/target.js";
import { findingFingerprint } from "../../src/kit/findings/sarif.js";
import { EXAMPLE_FINDING, arbitrariesExample } from "../support/doc-example.js";
import { useInstalledPackage } from "../support/installed.js";
import { INSTALLED_LESSON_COMMAND, LESSONS } from "../support/lessons.js";

const project = useInstalledPackage(async () => {
  // A fork with the similar-prefix mistake (CVE-2025-54794 and others), written as a user would:
  // plain JavaScript, the rest of the contract taken from the installed package.
  await writeFile(
    join(project.consumer, "similar-prefix.mjs"),
    'export { workspacePath, createWorkspaceTools } from "workspace-gates";\nexport const isInside = (root, path) => path.startsWith(root);\n',
  );
  await writeFile(join(project.consumer, "no-contract.mjs"), "export default { isInside: () => true };\nexport const workspacePath = 42;\n");
  await writeFile(join(project.consumer, "typed.ts"), "export const isInside = (root: string, path: string): boolean => path === root;\n");
  await copyFile("fixtures/secure/own-wording.mjs", join(project.consumer, "own-wording.mjs"));
});
const { gates, inConsumer } = project;

describe("the installed workspace-gates command", () => {
  it("is installed without this repository's devDependencies, nor its optional peers tsx, memfs and @resvg/resvg-js, which it declares, with its licence and contract", async () => {
    const installed = await readdir(join(project.consumer, "node_modules"));
    expect(installed).toContain("workspace-gates");
    for (const dev of ["vitest", "typescript", "@stryker-mutator", "memfs", "@fast-check", "tsx", "esbuild", "@resvg"]) expect(installed).not.toContain(dev);
    const shipped = await readdir(join(project.consumer, "node_modules", "workspace-gates"));
    expect(shipped).toEqual(expect.arrayContaining(["LICENSE", "docs", "dist", "package.json"]));
    const manifest = JSON.parse(await readFile(join(project.consumer, "node_modules", "workspace-gates", "package.json"), "utf8")) as { peerDependenciesMeta: Record<string, { optional: boolean }> };
    expect(manifest.peerDependenciesMeta).toEqual({ "@resvg/resvg-js": { optional: true }, memfs: { optional: true }, tsx: { optional: true } });
  });

  it("refuses toctou --png before the run, naming the renderer to install, and --svg needs nothing", async () => {
    const refused = await gates("toctou", "--tools", "chapter", "--png", "timeline.png");
    expect(refused.code, refused.stdout).toBe(2);
    expect(refused.stderr).toContain("toctou: could not run: --png draws with @resvg/resvg-js, an optional peer dependency that is not installed here (npm i @resvg/resvg-js)");
    expect(refused.stdout).not.toContain("escaped");
    const drawn = await gates("toctou", "--tools", "chapter", "--svg", "timeline.svg");
    expect(drawn.code, drawn.stderr).toBe(1);
    expect(await readFile(join(project.consumer, "timeline.svg"), "utf8")).toMatch(/^<svg /);
  });

  it("says above its closing line what a missing optional peer left unchecked, and how to install it", async () => {
    const { code, stdout } = await gates("audit", "--only", "faults.permissions,isInside.posix", "--runs", "3", "--seed", "1");
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/^not checked: faults\.permissions needs memfs, which is not installed here \(npm i -D memfs\)\njudged: .*\ntime: .*\naudit: \d+ passed, 0 failed, 0 skipped, 1 not applicable\n$/m);
  });

  it("runs every lesson's commands as the pages give them for an installed project, each exiting as the page says", async () => {
    for (const lesson of LESSONS) {
      const page = await readFile(lesson.page, "utf8");
      const commands = [...page.matchAll(INSTALLED_LESSON_COMMAND)];
      expect(commands.length, lesson.page).toBe(2);
      for (const [command, , exits] of commands) {
        const line = (command as string).replace(/\s+# exits \d$/, "");
        const { code, stdout, stderr } = await inConsumer("sh", ["-c", line]);
        expect(code, `${line}\n${stdout}${stderr}`).toBe(Number(exits));
      }
    }
  });

  it("refuses a .ts module without tsx (exit 2), saying to install it", async () => {
    const { code, stderr } = await gates("audit", "typed.ts", "--runs", "1");
    expect(code).toBe(2);
    expect(stderr).toBe(`audit: cannot load typed.ts: ${TSX_MISSING}\n`);
  });

  it("passes a secure module with its own wording and conventions (exit 0, warnings), and fails it with --strict (exit 1)", async () => {
    const plain = await gates("audit", "node_modules/workspace-gates/fixtures/secure/own-wording.mjs", "--runs", "5", "--seed", "1");
    expect(plain.code, plain.stdout).toBe(0);
    expect(plain.stdout).toMatch(/^warnings, which do not fail the run .*: .*bashLimits\.output \(convention differs\)/m);
    expect(plain.stdout).toMatch(/^conformance: texts differ from the reference's .* in conformance\.fields, conformance\.truncation;/m);
    const strict = await gates("audit", "own-wording.mjs", "--only", "bashLimits.output,conformance.fields", "--strict", "--runs", "5", "--seed", "1");
    expect(strict.code, strict.stdout).toBe(1);
  });

  it("sets one finding aside with a suppressions file and says so; a bad flag is one line with the closest flag", async () => {
    const fingerprint = findingFingerprint("similar-prefix.mjs", "isInside.posix", "hardening broken");
    await writeFile(join(project.consumer, "suppressions.json"), JSON.stringify({ suppressions: [{ fingerprint, reason: "we never compare siblings" }] }));
    const { code, stdout } = await gates("audit", "similar-prefix.mjs", "--only", "isInside.posix", "--runs", "200", "--seed", "1", "--suppressions", "suppressions.json");
    expect(code, stdout).toBe(0);
    expect(stdout).toContain("suppressions (suppressions.json): 1 finding set aside\n  isInside.posix (hardening broken): we never compare siblings\n");
    const bad = await gates("audit", "--sed", "1");
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe("audit: unknown flag --sed (did you mean --seed?)");
  });

  it("prints its version", async () => {
    expect(await gates("--version")).toEqual({ code: 0, stdout: `${project.version}\n`, stderr: "" });
  });

  it("passes the package's own implementation (exit 0)", async () => {
    const { code, stdout } = await gates("audit", "--runs", "3", "--seed", "1");
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/^audit: \d+ passed, 0 failed, 0 skipped/m);
  });

  it("fails a vulnerable fork (exit 1) with a replay line that, run as printed, reproduces the failure", async () => {
    const { code, stdout } = await gates("audit", "similar-prefix.mjs", "--only", "isInside.posix", "--runs", "200", "--seed", "1");
    expect(code, stdout).toBe(1);
    const replay = /^ {4}replay: (.+)$/m.exec(stdout)?.[1];
    const counterexample = /^ {4}counterexample:\n {6}(.+)$/m.exec(stdout)?.[1];
    expect(replay).toMatch(/^npx workspace-gates audit similar-prefix\.mjs --only isInside\.posix --seed 1 --path \S+$/);
    const again = await inConsumer("sh", ["-c", replay as string]);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    expect(again.stdout).toContain(`      ${counterexample as string}\n`);
  });

  it("refuses a module with no usable contract export (exit 2), naming the exports it looked for", async () => {
    const { code, stdout, stderr } = await gates("audit", "no-contract.mjs", "--runs", "1");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/no-contract\.mjs.*isInside, workspacePath, createWorkspaceTools/);
  });

  it("fails a fork against the shipped baseline (exit 1) and names the regression", async () => {
    const json = join(project.consumer, "fork-audit.json");
    const baseline = "node_modules/workspace-gates/fixtures/baseline.json";
    const { code, stdout } = await gates("audit", "similar-prefix.mjs", "--baseline", baseline, "--runs", "20", "--seed", "1", "--json", json);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^ {2}regressions \(passed there, failed or skipped here\): .*isInside\.posix/m);
    expect(JSON.parse(await readFile(json, "utf8"))).toMatchObject({ target: "similar-prefix.mjs" });
  });

  it("runs docs/arbitraries.md's example as written, finding the startsWith(root) mistake", async () => {
    await writeFile(join(project.consumer, "similar-prefix.example.mjs"), await arbitrariesExample());
    const { code, stdout, stderr } = await inConsumer(process.execPath, ["similar-prefix.example.mjs"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(EXAMPLE_FINDING);
  });

  it("leaves no sandbox in TMPDIR", async () => {
    expect(await readdir(project.privateTmp)).toEqual([]);
  });
});
