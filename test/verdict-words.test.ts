// Progress, table, summary and exit code from one rule (issue 45): every row's verdict word is the
// one progress printed for it, the closing line counts each row once by that word, and the findings
// line sums the failures by severity and by consequence, as `npm audit` sums its.
import { describe, expect, it } from "vitest";
import { CONSEQUENCES, type Consequence } from "../src/kit/findings/findings.js";
import { findingsLine, severityLevel } from "../src/kit/audit/reports/report-text.js";
import { cli } from "./support/cli.js";

/** Each table row's property and verdict word, and each progress line's. */
function words(stdout: string, stderr: string): { table: Map<string, string>; progress: Map<string, string> } {
  const table = new Map([...stdout.matchAll(/^\S+(?: \S+)?\s+([a-zA-Z]+\.[a-zA-Z]+)\s{2,}(.+?)\s{2,}\d+\s+\d+\s+[\d.]+s$/gm)].map(([, id, word]) => [id as string, (word as string).trim()]));
  const progress = new Map([...stderr.matchAll(/^audit: \[\d+\/\d+\] (\S+) (.+) \(\d+ runs, [\d.]+s\)$/gm)].map(([, id, word]) => [id as string, word as string]));
  return { table, progress };
}

describe("one verdict word per row", () => {
  it("is the same in progress and in the table, and the closing line counts every row once by it", { timeout: 120_000 }, async () => {
    // A module written otherwise than the reference: a warning, texts that differ, a known limit, and
    // properties that pass or do not apply.
    const only = "fields.nulBytes,bashLimits.output,limits.hardlink,conformance.fields,approval.refused";
    const { code, stdout, stderr } = await cli(["audit", "fixtures/secure/own-wording.mjs", "--only", only, "--runs", "5", "--seed", "1"]);
    expect(code, stdout + stderr).toBe(0);
    const { table, progress } = words(stdout, stderr);
    expect([...table.keys()].sort()).toEqual([...only.split(","), "coverage.tools"].sort());
    for (const [id, word] of progress) expect(table.get(id), id).toBe(word);
    expect(new Set(table.values())).toEqual(new Set(["passed", "warning", "known limit", "differs", "not applicable"]));
    const closing = /^audit: (.+)$/m.exec(stdout)?.[1] ?? "";
    const counted = closing.split(", ").reduce((sum, part) => sum + Number(part.split(" ")[0]), 0);
    expect(counted, closing).toBe(table.size);
    expect(closing).toMatch(/^\d+ passed, 0 failed, 0 skipped, 1 warning, 1 known limit, 1 text differs, 1 not applicable$/);
  });

  it("sums a failing run's findings by severity and by consequence, and fails it (exit 1)", { timeout: 120_000 }, async () => {
    const { code, stdout, stderr } = await cli(["audit", "fixtures/vulnerable/similar-prefix.ts", "--only", "isInside.posix,containment.workspacePath", "--runs", "30", "--seed", "1"]);
    expect(code).toBe(1);
    const { table, progress } = words(stdout, stderr);
    expect(table.get("isInside.posix")).toBe("FAILED");
    expect(progress.get("isInside.posix")).toBe("FAILED");
    expect(stdout).toMatch(/^findings: 2 \(2 low\): 2 hardening broken$/m);
    expect(stdout).toMatch(/^audit: 1 passed, 2 failed, 0 skipped$/m);
  });
});

describe("a severity", () => {
  it("is ranked as code scanning ranks a security-severity, and a consequence without one has none", () => {
    expect([9.1, 9, 8.9, 7, 6.9, 4, 3.9, undefined].map(severityLevel)).toEqual(["critical", "critical", "high", "high", "medium", "medium", "low", "none"]);
    expect(findingsLine({ byConsequence: {} })).toBeUndefined();
    const byConsequence: Partial<Record<Consequence, number>> = { "outside changed": 1, unavailable: 2, "not attacked": 1 };
    expect(findingsLine({ byConsequence })).toBe(`findings: 4 (1 critical, 2 medium, 1 without a severity): 1 outside changed, 2 unavailable, 1 not attacked`);
    expect(CONSEQUENCES["outside changed"].securitySeverity).toBeGreaterThanOrEqual(9);
  });
});
