// Protected paths (issue 51): the patterns a user gives are taken as gitignore takes them, the audit
// lays out what they match at every depth beside its twins and links, and the `protected.*` properties
// fail a tool that honours no protection, each deny-list fork of the advisories at its own hole, and
// pass the deny list that holds.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Intent, NESTING, PROTECTED_FILE, protectedAttack, protectedTwins } from "../src/kit/audit/arbitraries/index.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { PROTECTED_PROPERTIES, PROTECTED_SECRET, protectedWritten } from "../src/kit/audit/properties/protected.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { ProtectPatternError, instanceOf, isProtectedPath, parseProtectPatterns } from "../src/kit/operations/protected-paths.js";
import { type AuditTarget, loadTarget, referenceTarget } from "../src/kit/operations/target.js";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { variantTarget } from "./support/variant-target.js";
import { CONSEQUENCES, DEFAULT_FAIL_ON } from "../src/kit/findings/findings.js";
import { parseMapping, readMapping } from "../src/kit/mcp/mapping.js";
import { mcpTarget } from "../src/kit/mcp/target.js";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { cli, useScratch } from "./support/cli.js";
import { MAPPING_FILE, served } from "./support/surface.js";
import { Runner } from "./support/action-runner.js";

const patterns = (...texts: string[]) => parseProtectPatterns(texts, "--protect");
const at = (path: string) => path.split("/");
const property = (id: string) => PROPERTIES.find((candidate) => candidate.id === id) as (typeof PROPERTIES)[number];
const withProtect = (target: AuditTarget, ...texts: string[]): AuditTarget => ({ ...target, protect: patterns(...texts) });

describe("protected patterns, gitignore-style", () => {
  it("match a name without a slash at any depth, and everything under it", () => {
    const git = patterns(".git");
    for (const path of [".git", ".git/config", "tools/repo/.git/config", "a/.git"]) expect(isProtectedPath(git, at(path), false), path).toBe(true);
    for (const path of ["git", ".gitignore", "a/b.git", "x.git/config"]) expect(isProtectedPath(git, at(path), false), path).toBe(false);
  });

  it("fold letter case, composition and trailing dots and spaces, as macOS and Windows open names", () => {
    const git = patterns(".git");
    for (const path of [".GIT/config", ".git./config", ".git /config", "Tools/.Git./config"]) expect(isProtectedPath(git, at(path), false), path).toBe(true);
    expect(isProtectedPath(patterns("caf\u00e9"), ["cafe\u0301"], false)).toBe(true);
  });

  it("anchor a pattern with a slash at the root, match directories only for a trailing one, and take globs", () => {
    expect(isProtectedPath(patterns("config/secrets.json"), at("config/secrets.json"), false)).toBe(true);
    expect(isProtectedPath(patterns("config/secrets.json"), at("a/config/secrets.json"), false)).toBe(false);
    expect(isProtectedPath(patterns("/.env"), at("a/.env"), false)).toBe(false);
    expect(isProtectedPath(patterns("**/keys"), at("a/b/keys/k"), false)).toBe(true);
    expect(isProtectedPath(patterns("build/"), at("build"), false)).toBe(false);
    expect(isProtectedPath(patterns("build/"), at("build"), true)).toBe(true);
    expect(isProtectedPath(patterns("build/"), at("build/out.js"), false)).toBe(true);
    expect(isProtectedPath(patterns("*.key"), at("deep/id.KEY"), false)).toBe(true);
    expect(isProtectedPath(patterns("secret-[0-9]"), at("secret-7"), false)).toBe(true);
    expect(isProtectedPath(patterns("secret-[!0-9]"), at("secret-7"), false)).toBe(false);
  });

  it("take several patterns comma-separated or repeated", () => {
    expect(patterns(".git,.env", "node_modules/").map((pattern) => pattern.text)).toEqual([".git", ".env", "node_modules/"]);
  });

  it.each([
    ["!keep", /negation is not supported/],
    ["a\\*", /escapes are not supported/],
    ["a//b", /empty component/],
    ["../outside", /a \. or \.\. component/],
    ["**", /protects everything/],
    ["[ab", /unclosed \[/],
  ])("refuse %s, saying which rule", (text, rule) => {
    expect(() => patterns(text)).toThrow(ProtectPatternError);
    expect(() => patterns(text)).toThrow(rule);
  });

  it("refuse a list with no pattern", () => {
    expect(() => patterns(" , ")).toThrow(/--protect needs at least one pattern/);
  });

  it("spell each pattern with a name it protects", () => {
    const texts = [".git", "*.key", "config/secrets.json", "**/.env", "build/", "id_[rd]sa", "secret-[!0-9]", "a?c"];
    for (const text of texts) {
      const [pattern] = patterns(text);
      expect(isProtectedPath([pattern!], instanceOf(pattern!), true), text).toBe(true);
    }
  });
});

describe("the attack on protected entries", () => {
  const EVERY_INTENT: Intent[] = [{ kind: "existing" }, { kind: "fresh" }, { kind: "directory" }];
  const [attack] = fc.sample(protectedAttack(patterns(".git"), EVERY_INTENT), { numRuns: 1, seed: 1 });
  const texts = attack!.aims.map((aim) => (aim.candidate.form === "text" ? aim.candidate.text : ""));

  it("lays out the entry at the root and nested at every depth, a file at odd depths", () => {
    expect(attack!.entries).toContainEqual({ kind: "file", at: [".git", PROTECTED_FILE] });
    expect(attack!.entries).toContainEqual({ kind: "file", at: [NESTING[0], ".git"] });
    expect(attack!.entries).toContainEqual({ kind: "file", at: [NESTING[0], NESTING[1], ".git", PROTECTED_FILE] });
    expect(attack!.entries).toContainEqual({ kind: "file", at: [...NESTING, ".git"] });
  });

  it("aims at every twin, through links, through `..`, at every spelling a tool may rewrite into the name, and at the workspace itself", () => {
    expect(protectedTwins(".git")).toEqual([".GIT", ".git.", ".git "]);
    for (const aimed of [".git/config", ".GIT/config", ".git./config", ".git /config", "tools/repo/.git/config", "to-protected0/config", "to-protected0-file", "via/../.git/config", "./.git/config", ".git//config", ".git/new.txt", ".git", "", "%2Egit/config", "'.git'/config", "．ｇｉｔ/config"])
      expect(texts, aimed).toContain(aimed);
  });

  it("writes the secret into exactly the protected files a tree lays out", () => {
    const written = protectedWritten([...attack!.entries, { kind: "file", at: ["plain.txt"] }], patterns(".git"));
    expect(written.map((file) => file.path)).toContain(".GIT/config");
    expect(written.map((file) => file.path)).not.toContain("plain.txt");
    expect(written.every((file) => file.content.startsWith(PROTECTED_SECRET))).toBe(true);
  });
});

describe("the protected.* properties", () => {
  it("are one per operation, and their consequences fail the run by default", () => {
    expect(PROTECTED_PROPERTIES.map((candidate) => candidate.id)).toContain("protected.read");
    for (const consequence of ["protected read", "protected changed", "protected revealed"] as const) {
      expect(DEFAULT_FAIL_ON).toContain(consequence);
      expect(CONSEQUENCES[consequence].weaknesses).toContain("CWE-284");
    }
  });

  it("are not applicable without protected paths", async () => {
    const result = await runProperty(property("protected.read"), await referenceTarget(), { seed: 1, runs: 1 });
    expect(result.status).toBe("not-applicable");
    expect(result.reason).toMatch(/--protect/);
  });

  it("fail tools that honour no protection with the exact call, which needs nothing but the model's input", async () => {
    const result = await runProperty(property("protected.read"), withProtect(await referenceTarget(), ".git"), { seed: 1, runs: 3 });
    expect(result.status).toBe("failed");
    expect(result.consequence).toBe("protected read");
    expect(result.threat).toBe("the model's input alone");
    expect(result.reason).toContain(`${PROTECTED_SECRET} .git/${PROTECTED_FILE}`);
    expect(result.counterexample).toContain('read.execute({"path":".git/config"})');
    const written = await runProperty(property("protected.write"), withProtect(await referenceTarget(), ".git"), { seed: 1, runs: 3 });
    expect(written.consequence).toBe("protected changed");
  });

  // Each fork's hole, as its reason names it: the nested entry, a twin, a link.
  const holes: Record<string, RegExp> = {
    "protect-root-only": /tools\//,
    "protect-case-sensitive": /\.GIT|\.git\.|\.git /,
    "protect-not-through-links": /to-protected0/,
    "protect-decoded-after-check": /%2Egit/,
  };

  it.each(VULNERABLE_VARIANTS.filter((variant) => variant.protect !== undefined).map((variant) => [variant.module, variant] as const))("fail the deny-list fork %s where its list has a hole", async (module, variant) => {
    const target = await variantTarget(variant);
    for (const id of variant.caughtBy) {
      const result = await runProperty(property(id), target, { seed: 1, runs: 3 });
      expect(result.status, id).toBe("failed");
      expect(`${result.reason}\n${result.counterexample}`, id).toMatch(holes[module] as RegExp);
    }
  });

  it("fail a listing, a walk and a stat that answer otherwise once only the protected entries changed: protected revealed", async () => {
    const surface = withProtect(await loadTarget("fixtures/surface/surface.ts"), ".git");
    for (const id of ["protected.list", "protected.tree", "protected.stat"]) {
      const result = await runProperty(property(id), surface, { seed: 1, runs: 2, stopAtFirstFailure: true });
      expect(result.consequence, `${id}: ${result.reason}`).toBe("protected revealed");
      expect(result.reason).toContain("as the protected entries were");
    }
  });

  it("pass the deny list that holds, at every depth, spelling and link", async () => {
    const target = withProtect(await loadTarget("fixtures/secure/protected-tools.ts"), ".git");
    for (const id of ["protected.read", "protected.write"]) {
      for (const seed of [1, 2, 3]) {
        const result = await runProperty(property(id), target, { seed, runs: 4 });
        expect(result.status, `${id} seed ${seed}: ${result.reason}\n${result.counterexample}`).toBe("passed");
      }
    }
  });

  // Regression: its deny list awaited lookups after the path check, a window a directory swapped for
  // a link out in that moment carried a new file's write through (m/sub/new.txt landed in outside/dir).
  it("keeps no wait between its check and its use: a directory swapped in the call carries nothing out", async () => {
    const target = withProtect(await loadTarget("fixtures/secure/protected-tools.ts"), ".git");
    for (const seed of [1, 2]) {
      const result = await runProperty(property("sequences.swapInCall"), target, { seed, runs: 15 });
      expect(result.status, `seed ${seed}: ${result.reason}\n${result.counterexample}`).toBe("passed");
    }
  });
});

describe("every report of a protected finding", () => {
  const scratch = useScratch("workspace-gates-protected-reports-");

  it("names its consequence, its weaknesses and what the protected entries are", async () => {
    const file = (name: string) => join(scratch.path, name);
    const { code, stdout } = await cli(["audit", "--protect", ".git", "--runs", "2", "--seed", "1", "--only", "protected.write", "--json", file("r.json"), "--sarif", file("r.sarif"), "--junit", file("r.xml"), "--html", file("r.html")]);
    expect(code).toBe(1);
    expect(stdout).toContain("consequence: protected changed");
    expect(stdout).toContain(`each of its files holds ${PROTECTED_SECRET}`);
    const json = JSON.parse(await readFile(file("r.json"), "utf8")) as { summary: { byConsequence: Record<string, number> }; results: { id: string; consequence?: string; weaknesses?: string[] }[] };
    expect(json.summary.byConsequence).toEqual({ "protected changed": 1 });
    expect(json.results.find((result) => result.id === "protected.write")).toMatchObject({ consequence: "protected changed", weaknesses: expect.arrayContaining(["CWE-284"]) });
    const sarif = JSON.parse(await readFile(file("r.sarif"), "utf8")) as { runs: { tool: { driver: { rules: { id: string; properties: Record<string, unknown> }[] } } }[] };
    expect(sarif.runs[0]!.tool.driver.rules.find((rule) => rule.id === "protected.write")?.properties["security-severity"]).toBe(String(CONSEQUENCES["protected changed"].securitySeverity));
    expect(await readFile(file("r.xml"), "utf8")).toContain('type="protected changed"');
    expect(await readFile(file("r.html"), "utf8")).toContain("protected changed");
 
    // A module audited with --protect is still the module every report points at.
    const forked = await cli(["audit", "fixtures/vulnerable/protect-root-only.ts", "--protect", ".git", "--runs", "1", "--seed", "1", "--only", "protected.read", "--json", file("m.json")]);
    expect(forked.code).toBe(1);
    expect((JSON.parse(await readFile(file("m.json"), "utf8")) as { module?: string }).module).toBe("fixtures/vulnerable/protect-root-only.ts");
    expect(forked.stdout).toContain("replay: npx workspace-gates audit fixtures/vulnerable/protect-root-only.ts --protect .git --only protected.read");
  });
});

describe("how the user names protected paths", () => {
  const scratch = useScratch("workspace-gates-protected-action-");

  it("--protect: a pattern the audit cannot take is a usage error naming it", async () => {
    const { code, stderr } = await cli(["audit", "--protect", "!x", "--runs", "1", "--only", "protected.read"]);
    expect(code).toBe(2);
    expect(stderr).toContain('--protect: the pattern "!x" negates');
  });

  it("--protect: the reference, which protects nothing, fails protected.read at the exact call", async () => {
    const { code, stdout } = await cli(["audit", "--protect", ".git", "--runs", "2", "--seed", "1", "--only", "protected.read"]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/protected\.read\s+FAILED[^]*consequence: protected read/);
    expect(stdout).toContain('read.execute({"path":".git/config"})');
    // The replay names what is protected: without it, the property would not apply.
    const replay = /replay: (.*)$/m.exec(stdout)?.[1] ?? "";
    expect(replay).toMatch(/ --protect \.git /);
    // `npx workspace-gates audit …`: the words after the command's name, none of them quoted here.
    const again = await cli(replay.split(" ").slice(2));
    expect(again.code, again.stdout).toBe(1);
  });

  it("the action's protect input: each line becomes one --protect, its commas kept", async () => {
    // The audit step alone, run by the test runner with a stand-in bin that records its arguments.
    const workspace = join(scratch.path, "action");
    await mkdir(workspace, { recursive: true });
    const bin = join(scratch.path, "bin.sh");
    await writeFile(bin, `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(join(scratch.path, "args"))}\n`);
    await chmod(bin, 0o755);
    const runner = new Runner(process.cwd(), /^$/, workspace, scratch.path, process.env);
    await runner.runActionStep("audit", { module: "m.ts", protect: ".git,**/.env\nnode_modules/\n" }, { package: { bin, work: scratch.path } });
    const args = (await readFile(join(scratch.path, "args"), "utf8")).split("\n");
    const at = args.indexOf("--protect");
    expect(args.slice(at, at + 4)).toEqual(["--protect", ".git,**/.env", "--protect", "node_modules/"]);
  });

  it("the mapping's protect: a list of patterns, refused otherwise with the file and the rule", () => {
    expect(parseMapping(`{ "protect": [".git", "**/.env"] }`, "m.json").protect?.map((pattern) => pattern.text)).toEqual([".git", "**/.env"]);
    expect(() => parseMapping(`{ "protect": ".git" }`, "m.json")).toThrow(/mapping m\.json: protect must be a list of patterns/);
    expect(() => parseMapping(`{ "protect": ["../x"] }`, "m.json")).toThrow(/mapping m\.json: protect: the pattern "\.\.\/x" has a \. or \.\. component/);
  });

  it("over MCP: the deny-list fork served by a server fails, the deny list that holds passes", { timeout: 120_000 }, async () => {
    const mapping = { ...(await readMapping(MAPPING_FILE)), protect: patterns(".git") };
    const verdict = async (module: string) => {
      // The test server adds a mkdir of its own, which protects nothing: only read and write are the module's.
      const target = mcpTarget(served(module), mapping, new Map([["mkdir", "the test server's own, not the module's"]]));
      try {
        await target.prepare();
        return await runProperty(property("protected.read"), target, { seed: 1, runs: 2, stopAtFirstFailure: true });
      } finally {
        await target.dispose();
      }
    };
    const fork = await verdict("fixtures/vulnerable/protect-root-only.ts");
    expect(fork.status).toBe("failed");
    expect(fork.counterexample).toMatch(/client\.callTool\(\{"name":"read","arguments":\{"path":"tools\//);
    const holds = await verdict("fixtures/secure/protected-tools.ts");
    expect(holds.status, `${holds.reason}\n${holds.counterexample}`).toBe("passed");
  });
});
