// `audit --regression-test DIR` (issue 45): the test file a user keeps for a failure, written for a fork,
// run with node:test: it fails against the fork, and passes once the fork's module is the fixed one.
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, useScratch } from "./support/cli.js";

const scratch = useScratch("workspace-gates-regression-test-");

/** A module in the user's project that is, for now, `file` (a fork), and later its fixed version. */
const reexport = (file: string) => `export * from ${JSON.stringify(pathToFileURL(resolve(file)).href)};\n`;

/** `node --test` on the written files, as a user runs them (tsx for the .ts module), from this repository so that tsx resolves. */
async function nodeTest(files: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--test", ...files], { timeout: 60_000 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  }
}

beforeAll(async () => {
  // workspace-gates as the user's project installs it: its arbitraries entry point (here from the sources).
  await writeFile(join(scratch.path, "package.json"), JSON.stringify({ name: "a-project", type: "module" }));
  const installed = join(scratch.path, "node_modules", "workspace-gates");
  await mkdir(installed, { recursive: true });
  await writeFile(join(installed, "package.json"), JSON.stringify({ name: "workspace-gates", type: "module", exports: { "./arbitraries": "./arbitraries.mjs" } }));
  await writeFile(join(installed, "arbitraries.mjs"), reexport("src/kit/arbitraries/index.ts"));
});

describe("audit --regression-test DIR", () => {
  it.each([
    ["a read and a write that escape", "fixtures/vulnerable/similar-prefix.ts", "fixtures/lessons/similar-prefix.ts", "containment.read,containment.write", "1", /returned content from outside[^]*something outside the workspace changed|something outside the workspace changed[^]*returned content from outside/],
    ["a listing that reveals the outside", "fixtures/surface/ls-stats-through-links.ts", "fixtures/surface/surface.ts", "containment.list", "1", /call 1 answered otherwise once only the outside had changed/],
    // Seed 1: at seeds 2 to 12 the shrunk move takes something out of the workspace first (outside changed).
    ["a move that destroys a file inside", "fixtures/surface/move-destination-unchecked.ts", "fixtures/surface/surface.ts", "containment.move", "1", /call \d+ destroyed what \S+ held/],
  ])("writes tests for %s that fail against the fork and pass once the module is fixed", async (name, fork, fixed, only, seed, failure) => {
    const project = join(scratch.path, only);
    const [module, tests] = [join(project, "tools.ts"), join(project, "regression")];
    await mkdir(tests, { recursive: true });
    await writeFile(module, reexport(fork));
    const { code, stdout } = await cli(["audit", module, "--only", only, "--seed", seed, "--runs", "50", "--regression-test", tests]);
    expect(code, stdout).toBe(1);
    const written = only.split(",").map((id) => join(tests, `${id}.test.mjs`));
    expect(stdout).toContain(`regression tests (node --test; a .ts module: node --import tsx --test):\n${written.map((file) => `  ${file}`).join("\n")}\n`);
    // The test carries the calls as the report printed them, and imports the module from where it is.
    const text = await readFile(written[0] as string, "utf8");
    expect(text).toContain('from "../tools.ts";');
    for (const call of /calls?(?:, in order)?(?: \(the rule broke at call \d+\))?:\n((?: {8}\d+\. .*\n)+)/.exec(stdout)?.[1]?.split("\n").filter((line) => line !== "") ?? []) expect(text).toContain(`answers.push(await ${call.replace(/^ *\d+\. /, "")});`);
    const against = await nodeTest(written);
    expect(against.code, `${name}: ${against.output}`).toBe(1);
    expect(against.output).toMatch(failure);
    await writeFile(module, reexport(fixed));
    const fixedRun = await nodeTest(written);
    expect(fixedRun.code, fixedRun.output).toBe(0);
    expect(fixedRun.output).toMatch(new RegExp(`^# pass ${written.length}$`, "m"));
  }, 120_000);

  it("says which failures get no test and why, and writes none for them", async () => {
    const tests = join(scratch.path, "none");
    await mkdir(tests);
    const { code, stdout } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix,limits.hardlink", "--seed", "1", "--runs", "20", "--regression-test", tests]);
    expect(code).toBe(1);
    expect(stdout).toContain("  no regression test for isInside.posix: its consequence, hardening broken, is judged by the property's own rule\n");
    expect(stdout).toContain("  no regression test for limits.hardlink: it is a known limit: the reference fails it too\n");
  });

  it("makes a folder that does not exist yet, as deep as it is named, and writes the tests there", async () => {
    const missing = join(scratch.path, "missing", "tests");
    const { code, stdout } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.write", "--seed", "1", "--runs", "50", "--regression-test", missing]);
    expect(code, stdout).toBe(1);
    expect(stdout).toContain(`  ${join(missing, "containment.write.test.mjs")}\n`);
    expect(await readFile(join(missing, "containment.write.test.mjs"), "utf8")).toContain("node:test");
  }, 120_000);

  it("refuses a folder it cannot make or write into before the run (exit 2, one line)", async () => {
    const file = join(scratch.path, "a-file");
    await writeFile(file, "");
    const { code, stdout, stderr } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "containment.read", "--runs", "5", "--regression-test", join(file, "tests")]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(new RegExp(`^audit: cannot write --regression-test ${join(file, "tests")}: ENOTDIR[^\\n]*\\n$`));
  });
});
