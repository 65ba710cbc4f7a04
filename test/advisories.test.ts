// The published path advisories: docs/advisories.md is the page generated from docs/advisories.json,
// the data holds the default audit of every audited version at every seed, and every finding on a
// fixed version is either the advisory's class (then the fix did not hold) or explained.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ADVISORIES, ADVISORY_CLASSES, AUDITED_VERSIONS } from "../fixtures/advisories.js";
import { ADVISORIES_DATA_FILE, ADVISORIES_PAGE_FILE, type AdvisoriesData, renderAdvisories, showsClass } from "../scripts/advisories-table.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { isConvention } from "../src/kit/findings/findings.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget } from "../src/kit/operations/target.js";

const data = JSON.parse(await readFile(ADVISORIES_DATA_FILE, "utf8")) as AdvisoriesData;
const runsOf = (pkg: string, version: string) => data.runs.filter((run) => run.package === pkg && run.version === version);

describe("the advisories table (docs/advisories.md)", () => {
  it("is the page generated from the data the last run wrote", async () => {
    expect(await readFile(ADVISORIES_PAGE_FILE, "utf8")).toBe(renderAdvisories(data));
  });

  it("holds the default audit of every audited version at seeds 1 to 5, each ending in a verdict", () => {
    expect(data.seeds).toEqual([1, 2, 3, 4, 5]);
    for (const version of AUDITED_VERSIONS) {
      const runs = runsOf(version.package, version.version);
      expect(runs.map((run) => run.seed), `${version.package}@${version.version}`).toEqual(data.seeds);
      for (const run of runs) expect([0, 1], `${version.version} seed ${run.seed}: ${run.verdict ?? ""}`).toContain(run.exitCode);
    }
  });

  it("holds no temp path of the run that wrote it: sandboxes are $BOX, the install folder $ADVISORIES", async () => {
    expect(await readFile(ADVISORIES_DATA_FILE, "utf8")).not.toMatch(/\/(?:tmp|dev\/shm|var\/folders)\//);
  });

  it("starts from the official filesystem server's line, each advisory's versions audited", () => {
    expect(ADVISORIES.map((advisory) => `${advisory.vulnerable} -> ${advisory.fixed}`)).toEqual(expect.arrayContaining(["2025.3.28 -> 2025.7.1", "2026.8.31 -> 2.3.0"]));
    for (const advisory of ADVISORIES)
      for (const version of [advisory.vulnerable, advisory.fixed]) expect(AUDITED_VERSIONS.some((audited) => audited.package === advisory.package && audited.version === version), version).toBe(true);
  });

  it("finds every advisory's class on its vulnerable version, and on no seed of its fixed one", () => {
    for (const advisory of ADVISORIES) {
      const shows = (version: string) => runsOf(advisory.package, version).filter((run) => run.findings.some((finding) => !isConvention(finding.consequence) && showsClass(finding, ADVISORY_CLASSES[advisory.class])));
      expect(shows(advisory.vulnerable).length, `${advisory.id} on ${advisory.vulnerable}`).toBeGreaterThan(0);
      expect(shows(advisory.fixed).map((run) => run.seed), `${advisory.id} on ${advisory.fixed}`).toEqual([]);
    }
  });

  it("explains, from the package's source, every finding on a fixed version that is not its advisory's class", () => {
    const properties = new Set(PROPERTIES.map((property) => property.id));
    for (const version of AUDITED_VERSIONS) {
      for (const id of Object.keys(version.standing)) expect(properties.has(id), id).toBe(true);
      const fixes = ADVISORIES.filter((advisory) => advisory.package === version.package && advisory.fixed === version.version);
      if (fixes.length === 0) continue;
      for (const run of runsOf(version.package, version.version))
        for (const finding of run.findings.filter((candidate) => !isConvention(candidate.consequence)))
          if (!fixes.some((advisory) => showsClass(finding, ADVISORY_CLASSES[advisory.class]))) expect(version.standing[finding.id], `${version.version} ${finding.id}`).toMatch(/\w{4,}/);
    }
  });
});

describe("a class, as a failure shows it", () => {
  const failureOf = async (module: string) => {
    const write = PROPERTIES.find((property) => property.id === "containment.write")!;
    const result = await runProperty(write, await loadTarget(module), { seed: 1, runs: 10, stopAtFirstFailure: true });
    expect(result.status, module).toBe("failed");
    return {
      id: result.id,
      ...(result.consequence === undefined ? {} : { consequence: result.consequence }),
      ...(result.threat === undefined ? {} : { threat: result.threat }),
      reason: result.reason ?? "",
      counterexample: result.counterexample ?? "",
    };
  };

  // GHSA-7rgq-gccq-qphx: the official server trimmed a quote or whitespace before its check, which the file call kept.
  it("tells a sibling named like the root plus a quote or a space from one whose name starts with the root's", async () => {
    const trimmed = await failureOf("fixtures/vulnerable/quote-trimmed.ts");
    expect(trimmed.reason).toMatch(/\$BOX\/[^/]+['\x20]\//);
    expect(showsClass(trimmed, ADVISORY_CLASSES.trimmedSibling)).toBe(true);
    expect(showsClass(trimmed, ADVISORY_CLASSES.similarPrefix)).toBe(false);
    const prefixed = await failureOf("fixtures/vulnerable/similar-prefix.ts");
    expect(showsClass(prefixed, ADVISORY_CLASSES.trimmedSibling)).toBe(false);
  });
});
