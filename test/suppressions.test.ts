// --suppressions: a file the command line names sets findings aside one by one, each with its reason;
// every run says what each entry did, and every report shows a suppressed finding as such.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { findingFingerprint } from "../src/kit/findings/sarif.js";
import { parseSuppressions } from "../src/kit/findings/suppressions.js";
import { cli as runCli, useScratch } from "./support/cli.js";
import { multitoolErrors, parseJUnit } from "./support/ci-reports.js";

const cli = (...argv: string[]) => runCli(argv);
const scratch = useScratch("workspace-gates-suppressions-test-");

const FORK = "fixtures/vulnerable/similar-prefix.ts";
// The fork's isInside calls a similar-prefix sibling inside: a broken check, at every seed.
const BROKEN_CHECK = findingFingerprint(FORK, "isInside.posix", "hardening broken");
// Its reads through such a sibling return the sibling's canary.
const ESCAPE = findingFingerprint(FORK, "containment.read", "outside read");
const audit = (file: string, only: string, ...more: string[]) => cli("audit", FORK, "--only", only, "--seed", "2", "--runs", "30", "--suppressions", file, ...more);

async function suppressions(name: string, entries: object[]): Promise<string> {
  const file = join(scratch.path, name);
  await writeFile(file, JSON.stringify({ suppressions: entries }));
  return file;
}

describe("an entry of --suppressions", () => {
  it("sets one finding aside with its reason (exit 0), says so, and every report shows it suppressed", async () => {
    const file = await suppressions("one.json", [{ fingerprint: BROKEN_CHECK, reason: "our isInside is never called with a sibling", expires: "2999-12-31" }]);
    const [json, sarif, junit] = ["one.report.json", "one.sarif", "one.xml"].map((name) => join(scratch.path, name)) as [string, string, string];
    const { code, stdout } = await audit(file, "isInside.posix", "--json", json, "--sarif", sarif, "--junit", junit);
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/^isInside\s+isInside\.posix\s+suppressed\s/m);
    expect(stdout).toContain(`suppressions (${file}): 1 finding set aside\n  isInside.posix (hardening broken): our isInside is never called with a sibling (until 2999-12-31)\n`);
    expect(stdout).toMatch(/^audit: 1 passed, 0 failed, 0 skipped, 1 suppressed$/m);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    expect(report.summary).toMatchObject({ failed: 0, suppressed: 1 });
    expect(report.results.find((result) => result.id === "isInside.posix")).toMatchObject({
      status: "failed",
      fingerprint: BROKEN_CHECK,
      suppressed: { reason: "our isInside is never called with a sibling", expires: "2999-12-31" },
    });
    const [result] = (JSON.parse(await readFile(sarif, "utf8")) as { runs: { results: { suppressions: unknown[] }[] }[] }).runs[0]?.results ?? [];
    expect(result?.suppressions).toEqual([{ kind: "external", status: "accepted", justification: "our isInside is never called with a sibling", properties: { expires: "2999-12-31" } }]);
    expect(await multitoolErrors([sarif])).toEqual([]);
    const { cases } = parseJUnit(await readFile(junit, "utf8"));
    expect(cases.get("isInside.posix")?.failure).toBeUndefined();
    expect(cases.get("isInside.posix")?.["system-out"]).toMatch(/^suppressed: our isInside is never called with a sibling \(until 2999-12-31\)/);
  }, 60_000);

  it("leaves the other findings failing, and says which entries matched nothing", async () => {
    const unused = "0".repeat(32);
    const file = await suppressions("partial.json", [
      { fingerprint: BROKEN_CHECK, reason: "accepted" },
      { fingerprint: unused, reason: "a finding since fixed" },
    ]);
    const sarif = join(scratch.path, "partial.sarif");
    const { code, stdout } = await audit(file, "isInside.posix,isInside.win32", "--sarif", sarif);
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^isInside\s+isInside\.win32\s+FAILED\s/m);
    expect(stdout).toContain(`  matched no finding of this run: ${unused} (a finding since fixed)\n`);
    // SARIF 2.1.0 §3.27.23: once suppressions were judged, every result says so, the open ones with none.
    const results = (JSON.parse(await readFile(sarif, "utf8")) as { runs: { results: { ruleId: string; suppressions: unknown[] }[] }[] }).runs[0]?.results ?? [];
    expect(results.map((result) => [result.ruleId, result.suppressions.length])).toEqual([
      ["isInside.posix", 1],
      ["isInside.win32", 0],
    ]);
  }, 60_000);

  it("past its date sets nothing aside: the finding fails the run again, and the run says why", async () => {
    const file = await suppressions("expired.json", [{ fingerprint: BROKEN_CHECK, reason: "until the fix lands", expires: "2020-01-31" }]);
    const { code, stdout } = await audit(file, "isInside.posix");
    expect(code, stdout).toBe(1);
    expect(stdout).toContain(`  expired on 2020-01-31, so its finding counts again: ${BROKEN_CHECK} (until the fix lands)\n`);
  }, 60_000);

  it("sets an escape aside only until a date", async () => {
    const forever = await suppressions("escape.json", [{ fingerprint: ESCAPE, reason: "upstream's bug" }]);
    const refused = await audit(forever, "containment.read");
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.stdout).toContain(`  not applied: it names an escape, which is set aside only until a date (expires): ${ESCAPE} (upstream's bug)\n`);
    const dated = await suppressions("escape-dated.json", [{ fingerprint: ESCAPE, reason: "upstream's bug, fix due", expires: "2999-01-01" }]);
    const accepted = await audit(dated, "containment.read");
    expect(accepted.code, accepted.stdout).toBe(0);
    expect(accepted.stdout).toMatch(/^workspacePath\s+containment\.read\s+suppressed\s/m);
  }, 120_000);
});

describe("a suppressions file that cannot be used", () => {
  const fingerprint = BROKEN_CHECK;
  it.each([
    ["not JSON", "{", /not JSON/],
    ["a list without its key", "[]", /expected \{ "suppressions": \[ … \] \}/],
    ["an unknown top-level field", JSON.stringify({ suppressions: [], ignore: [] }), /unknown field "ignore"/],
    ["an unknown field", JSON.stringify({ suppressions: [{ fingerprint, reason: "r", rule: "x" }] }), /entry 1: unknown field "rule" \(fields: fingerprint, reason, expires\)/],
    ["a short fingerprint", JSON.stringify({ suppressions: [{ fingerprint: "abc", reason: "r" }] }), /entry 1: fingerprint must be the 32 hex digits a report prints, got "abc"/],
    ["a blank reason", JSON.stringify({ suppressions: [{ fingerprint, reason: "  " }] }), /entry 1: reason must say why the finding is accepted/],
    ["no reason", JSON.stringify({ suppressions: [{ fingerprint }] }), /entry 1: reason must say why/],
    ["a date that does not exist", JSON.stringify({ suppressions: [{ fingerprint, reason: "r", expires: "2026-02-30" }] }), /entry 1: expires must be a date, YYYY-MM-DD, got "2026-02-30"/],
    ["one fingerprint twice", JSON.stringify({ suppressions: [{ fingerprint, reason: "r" }, { fingerprint, reason: "s" }] }), /entry 2: fingerprint \w+ is given twice/],
  ])("is refused whole when it has %s", (_what, text, message) => {
    expect(() => parseSuppressions("s.json", text)).toThrow(message);
  });

  it("stops the audit before it runs (exit 2), in one line naming the flag and the file", async () => {
    const file = join(scratch.path, "bad.json");
    await writeFile(file, "[]");
    const bad = await cli("audit", "--suppressions", file, "--only", "isInside.posix");
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect(bad.stderr).toBe(`audit: --suppressions ${file}: expected { "suppressions": [ … ] }\n`);
    const missing = await cli("audit", "--suppressions", join(scratch.path, "none.json"), "--only", "isInside.posix");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^audit: cannot read --suppressions .*none\.json: ENOENT/);
  });
});
