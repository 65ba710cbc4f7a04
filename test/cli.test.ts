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

describe("a bad flag, in the command's own words", () => {
  const synopsis = "usage: workspace-gates audit [MODULE | --mcp [--mapping FILE] -- COMMAND...] [flags] (workspace-gates audit --help lists every flag)\n";
  it.each([
    ["an unknown flag", ["--bogus-flag"], "unknown flag --bogus-flag"],
    ["a misspelt flag", ["--sed", "1"], "unknown flag --sed (did you mean --seed?)"],
    ["a flag cut short", ["--sari", "x.sarif"], "unknown flag --sari (did you mean --sarif?)"],
    ["a misspelt flag with its value", ["--seeed=1"], "unknown flag --seeed (did you mean --seed?)"],
    ["a flag without its value", ["--seed"], "--seed needs a value (write --seed=VALUE for one that starts with -)"],
    ["a value for a flag that takes none", ["--strict=yes"], "--strict takes no value"],
  ])("names %s, the closest flag when one is near, and one line of usage (exit 2)", async (_what, flags, message) => {
    // Never Node's advice to pass it after `--`, which starts an MCP server's command here.
    expect(await cli("audit", ...flags)).toEqual({ code: 2, stdout: "", stderr: `audit: ${message}\n${synopsis}` });
  });

  it("suggests the command a misspelt one was meant to be", async () => {
    const { code, stderr } = await cli("audti");
    expect(code).toBe(2);
    expect(stderr).toMatch(/^unknown command: audti \(did you mean audit\?\)\n/);
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
