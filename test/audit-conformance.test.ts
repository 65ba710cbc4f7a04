// Safety apart from conventions: fixtures/secure/own-wording.mjs, written from scratch with its own
// messages and conventions, breaks no rule whose breach costs anything; its departures from the
// chapter's conventions and texts are warnings, which fail the run only when asked.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { notTheChapters } from "./support/chapter-surface.js";
import { COVERAGE_ID } from "../src/kit/audit/coverage.js";
import { createSandbox } from "../src/kit/sandbox/sandbox.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { showDifference, showValue } from "../src/kit/audit/runner/show.js";
import { cli as runCli, useScratch } from "./support/cli.js";

const OWN_WORDING = "fixtures/secure/own-wording.mjs";

const cli = (...argv: string[]) => runCli(argv);
const scratch = useScratch("workspace-gates-conformance-test-");

describe("a secure module with its own wording and conventions", () => {
  it("breaks no rule whose breach costs anything, departs only from conventions, and passes the audit (exit 0)", async () => {
    const json = join(scratch.path, "own-wording.json");
    const { code, stdout } = await cli("audit", OWN_WORDING, "--runs", "20", "--seed", "11", "--json", json);
    expect(code, stdout).toBe(0);
    const report = JSON.parse(await readFile(json, "utf8")) as JsonReport;
    // It exports no runAgent, so the calling layer's properties do not apply to it, nor those of the
    // operations beyond read and write, which its tools do not do.
    const callingLayer = (property: (typeof PROPERTIES)[number]) => property.gate === "approval" || property.gate === "agent loop";
    // Its own conventions: the bash flood answered in its words, what exists answered by its real path.
    const departs = ["bashLimits.output", "precision.workspacePath"];
    const expected = PROPERTIES.map((property) => [
      property.id,
      callingLayer(property) || notTheChapters(property.id) ? "not-applicable" : property.kind === "guarantee" && !departs.includes(property.id) ? "passed" : "failed",
    ]);
    expect(report.results.map((result) => [result.id, result.status])).toEqual([...expected, [COVERAGE_ID, "passed"]]);
    for (const id of departs) expect(report.results.find((result) => result.id === id)).toMatchObject({ consequence: "convention differs" });
    expect(report.summary).toMatchObject({ failed: 0, warnings: 2, conformanceDiffers: 2, knownLimits: 1 });
    expect(stdout).toMatch(/^stringField\s+conformance\.fields\s+differs\s/m);
    expect(stdout).toMatch(/^bash limits\s+bashLimits\.output\s+warning\s/m);
    expect(stdout).toContain("conformance: texts differ from the reference's (docs/contract.md) in conformance.fields, conformance.truncation; a failure only with --conformance or --strict\n");
  }, 180_000); // a whole audit: slow on a loaded machine

  // Shrunk by containment.read at seed 11: a read through `..` of a missing file answered ENOENT, of an
  // existing one "leaves the workspace", so the answer told what exists beside the workspace.
  it("answers a read out of the workspace alike whether its file exists (regression: read \"../$sibling1/new.txt\")", async () => {
    const { createWorkspaceTools } = (await import(`../${OWN_WORDING}`)) as { createWorkspaceTools: (root: string) => { execute(input: unknown): Promise<unknown> }[] };
    const box = await createSandbox("workspace-gates-conformance-");
    try {
      const [read] = createWorkspaceTools(box.root);
      const path = "../ws-other/new.txt";
      const missing = await read?.execute({ path });
      const restore = await box.perturbOutside();
      const existing = await read?.execute({ path });
      await restore();
      expect(existing).toEqual(missing);
      expect(missing).toMatchObject({ isError: true });
    } finally {
      await box.dispose();
    }
  });

  it("fails the run with --conformance (exit 1), showing the marker's newlines escaped", async () => {
    const { code, stdout } = await cli("audit", OWN_WORDING, "--only", "conformance.truncation,conformance.fields", "--conformance", "--runs", "20", "--seed", "3");
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^truncation\s+conformance\.truncation\s+FAILED\s/m);
    expect(stdout).toContain('expected the marker "\\n[truncated ');
    expect(stdout).toContain('got "[... ');
    expect(stdout).toMatch(/^audit: 1 passed, 2 failed, 0 skipped$/m);
  });

  it("fails the run with --strict (exit 1), on its conventions and its texts alike", async () => {
    const { code, stdout } = await cli("audit", OWN_WORDING, "--only", "bashLimits.output,conformance.fields", "--strict", "--runs", "3", "--seed", "3");
    expect(code, stdout).toBe(1);
    expect(stdout).toMatch(/^bash limits\s+bashLimits\.output\s+FAILED\s/m);
    expect(stdout).toMatch(/^stringField\s+conformance\.fields\s+FAILED\s/m);
  }, 60_000);

  it("is no regression against the reference's baseline, unless conformance is asked for", async () => {
    const only = ["--only", "fields.tools,truncation.read,conformance.fields", "--runs", "10", "--seed", "1"];
    const plain = await cli("audit", OWN_WORDING, "--baseline", "fixtures/baseline.json", ...only);
    expect(plain.code, plain.stdout).toBe(0);
    const strict = await cli("audit", OWN_WORDING, "--baseline", "fixtures/baseline.json", "--conformance", ...only);
    expect(strict.code, strict.stdout).toBe(1);
    expect(strict.stdout).toContain("regressions (passed there, failed or skipped here): conformance.fields\n");
  });
});

describe("values in a report", () => {
  it.each([
    ["an object with Boolean's prototype", Object.assign(Object.create(Boolean.prototype) as object, { path: 1 }), 'Object.assign(Object.create(Boolean.prototype), {"path":1})'],
    ["a boxed boolean", new Boolean(false), "new Boolean(false)"],
    ["an object without prototype", Object.assign(Object.create(null) as object, { a: "x" }), '{__proto__:null,"a":"x"}'],
    ["a newline in a string", { content: "a\nb" }, '{"content":"a\\nb"}'],
    ["nested in an array", [Object.create(Number.prototype) as object], "[Object.assign(Object.create(Number.prototype), {})]"],
    ["an instance of an anonymous class", new (class {})(), "Object.assign(Object.create((anonymous).prototype), {})"],
    ["a symbol key", { [Symbol.for("k")]: -0 }, '{[Symbol.for("k")]:-0}'],
  ])("shows %s unambiguously", (_what, value, shown) => {
    expect(showValue(value)).toBe(shown);
  });

  it("names the first differing character, with escaped windows", () => {
    expect(showDifference("ab\ncd", "ab[cd", 3)).toBe('at character 2 of 5: expected "\\ncd", got "[cd" (5 characters)');
    expect(showDifference("abc", "ab", 3)).toBe('at character 2 of 3: expected "c", got (end of text) (2 characters)');
  });
});
