import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { invocationFrom } from "../src/kit/cli.js";
import { cli as runCli } from "./support/cli.js";

const cli = (...argv: string[]) => runCli(argv);

describe("workspace-gates, the command", () => {
  it.each([["--version"], ["-v"]])("%s prints the version of package.json", async (flag) => {
    const { version } = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    expect(await cli(flag)).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("mentions --version in its usage", async () => {
    expect((await cli("--help")).stdout).toContain("--version");
  });
});

describe("the replay prefix, as the command was started", () => {
  const cwd = "/home/u/project";
  it.each([
    ["the installed bin (npm's link)", "/home/u/project/node_modules/.bin/workspace-gates", {}, "npx workspace-gates audit"],
    ["the Windows shim's target name", "C:/p/node_modules/.bin/workspace-gates.cmd", {}, "npx workspace-gates audit"],
    ["the compiled file", "/home/u/project/dist/kit/bin.js", {}, "node dist/kit/bin.js audit"],
    ["the source through tsx", "/home/u/project/src/kit/bin.ts", {}, "npx tsx src/kit/bin.ts audit"],
    ["a path with a space", "/home/u/my tools/bin.js", {}, "node '../my tools/bin.js' audit"],
    [
      "this package's npm script",
      "/home/u/project/src/kit/bin.ts",
      { npm_lifecycle_event: "audit", npm_lifecycle_script: "tsx src/kit/bin.ts audit" },
      "npm run audit --",
    ],
    [
      "an npm script that adds flags (they would repeat)",
      "/home/u/project/src/kit/bin.ts",
      { npm_lifecycle_event: "baseline", npm_lifecycle_script: "tsx src/kit/bin.ts audit --seed 1" },
      "npx tsx src/kit/bin.ts audit",
    ],
    ["an unknown start", undefined, {}, "npx workspace-gates audit"],
  ])("%s", (_how, script, env, expected) => {
    expect(invocationFrom(script, env, cwd)("audit")).toBe(expected);
  });
});
