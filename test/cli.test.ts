// The workspace-gates command itself: --version, --help, unknown commands, and the replay command it
// prints, spelled the way the user invoked it (npx, node_modules/.bin, node dist/kit/bin.js, tsx).
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
  const cwd = "/srv/project";
  it.each([
    ["the installed bin (npm's link)", "/srv/project/node_modules/.bin/workspace-gates", {}, "npx workspace-gates audit"],
    ["a link named like a Windows shim", "C:/p/node_modules/.bin/workspace-gates.cmd", {}, "npx workspace-gates audit"],
    ["the file a Windows shim starts", "C:\\p\\node_modules\\workspace-gates\\dist\\kit\\bin.js", {}, "npx workspace-gates audit"],
    ["the installed file, started by path", "/srv/project/node_modules/workspace-gates/dist/kit/bin.js", {}, "npx workspace-gates audit"],
    ["the compiled file", "/srv/project/dist/kit/bin.js", {}, "node dist/kit/bin.js audit"],
    ["the source through tsx", "/srv/project/src/kit/bin.ts", {}, "npx tsx src/kit/bin.ts audit"],
    ["a path with a space", "/srv/my tools/bin.js", {}, "node '../my tools/bin.js' audit"],
    [
      "this package's npm script",
      "/srv/project/src/kit/bin.ts",
      { npm_lifecycle_event: "audit", npm_lifecycle_script: "tsx src/kit/bin.ts audit" },
      "npm run audit --",
    ],
    [
      "an npm script that adds flags (they would repeat)",
      "/srv/project/src/kit/bin.ts",
      { npm_lifecycle_event: "baseline", npm_lifecycle_script: "tsx src/kit/bin.ts audit --seed 1" },
      "npx tsx src/kit/bin.ts audit",
    ],
    ["an unknown start", undefined, {}, "npx workspace-gates audit"],
  ])("%s", (_how, script, env, expected) => {
    expect(invocationFrom(script, env, cwd)("audit")).toBe(expected);
  });
});
