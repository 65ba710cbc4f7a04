// The published path advisories: docs/advisories.md is the page generated from docs/advisories.json,
// the data holds the default audit of every audited version at every seed, and every finding on a
// fixed version is either the advisory's class (then the fix did not hold) or explained.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ADVISORIES, ADVISORY_CLASSES, type AdvisoryClass, AUDITED_VERSIONS } from "../fixtures/advisories.js";
import {
  ADVISORIES_DATA_FILE,
  ADVISORIES_PAGE_FILE,
  type AdvisoriesData,
  type AdvisoryClassName,
  couldShowClass,
  keptFinding,
  RACE_ATTEMPTS,
  renderAdvisories,
  showing,
  showsClass,
} from "../scripts/advisories-table.js";
import { parseProtectPatterns } from "../src/kit/operations/protected-paths.js";
import { RACE_OPERATIONS } from "../src/kit/toctou/race.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { isConvention } from "../src/kit/findings/findings.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { loadTarget } from "../src/kit/operations/target.js";

const data = JSON.parse(await readFile(ADVISORIES_DATA_FILE, "utf8")) as AdvisoriesData;
const classOf = (name: keyof typeof ADVISORY_CLASSES): AdvisoryClass => ADVISORY_CLASSES[name];
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

  // The data keeps a finding's classes, judged on its whole failure when the audit ran, not its counterexample (the run's reports keep it).
  it("keeps of each finding no counterexample, and only classes its consequence and threat allow", () => {
    const names = Object.keys(ADVISORY_CLASSES) as AdvisoryClassName[];
    for (const run of data.runs)
      for (const finding of run.findings) {
        const where = `${run.version} seed ${run.seed} ${finding.id}`;
        expect(Object.keys(finding), where).not.toContain("counterexample");
        const allowed = names.filter((name) => couldShowClass(finding, classOf(name)));
        expect(allowed, where).toEqual(expect.arrayContaining(finding.classes));
      }
  });

  it("starts from the official filesystem server's line, each advisory's versions audited", () => {
    expect(ADVISORIES.map((advisory) => `${advisory.vulnerable} -> ${advisory.fixed}`)).toEqual(expect.arrayContaining(["2025.3.28 -> 2025.7.1", "2026.8.31 -> 2.3.0"]));
    for (const advisory of ADVISORIES)
      for (const version of [advisory.vulnerable, advisory.fixed]) expect(AUDITED_VERSIONS.some((audited) => audited.package === advisory.package && audited.version === version), version).toBe(true);
  });

  it("finds every advisory's class on its vulnerable version, and on no seed of its fixed one", () => {
    for (const advisory of ADVISORIES.filter((candidate) => classOf(candidate.class).race === undefined)) {
      const shows = (version: string) => runsOf(advisory.package, version).filter((run) => run.findings.some((finding) => !isConvention(finding.consequence) && finding.classes.includes(advisory.class)));
      if (advisory.unseen === undefined) expect(shows(advisory.vulnerable).length, `${advisory.id} on ${advisory.vulnerable}`).toBeGreaterThan(0);
      else expect(shows(advisory.vulnerable).map((run) => run.seed), `${advisory.id} on ${advisory.vulnerable} is said unseen`).toEqual([]);
      expect(shows(advisory.fixed).map((run) => run.seed), `${advisory.id} on ${advisory.fixed}`).toEqual([]);
    }
  });

  it("races every version of a race advisory five times at the same tries, each race judged, a fixed version's beside a control that escaped", () => {
    const raced = new Set(ADVISORIES.filter((advisory) => classOf(advisory.class).race !== undefined).flatMap((advisory) => [`${advisory.package}@${advisory.vulnerable}`, `${advisory.package}@${advisory.fixed}`]));
    expect(raced.size).toBeGreaterThan(0);
    for (const name of raced) {
      const races = (data.races ?? []).filter((race) => `${race.package}@${race.version}` === name);
      expect(races.map((race) => race.run), name).toEqual([1, 2, 3, 4, 5]);
      const fixed = ADVISORIES.some((advisory) => `${advisory.package}@${advisory.fixed}` === name && classOf(advisory.class).race !== undefined);
      for (const race of races) {
        expect([0, 1], `${name} race ${race.run}: ${race.verdict ?? ""}`).toContain(race.exitCode);
        // A race a fixed version did not lose means something only if the chapter's tools lost it in the same tries.
        if (fixed) expect(race.control?.escapes, `${name} race ${race.run}'s control`).toBeGreaterThan(0);
        expect(Object.values(race.perOperation).reduce((sum, tally) => sum + tally.attempts, 0), `${name} race ${race.run}`).toBe(RACE_ATTEMPTS);
      }
    }
  });

  it("finds every race advisory's operations escaping on its vulnerable version, and in no race of its fixed one", () => {
    for (const advisory of ADVISORIES.filter((candidate) => classOf(candidate.class).race !== undefined)) {
      const operations = classOf(advisory.class).race!;
      for (const operation of operations) expect(RACE_OPERATIONS as readonly string[], `${advisory.id}: ${operation}`).toContain(operation);
      const won = (version: string) =>
        (data.races ?? []).filter((race) => race.package === advisory.package && race.version === version && operations.some((operation) => (race.perOperation[operation]?.escapes ?? 0) > 0)).map((race) => race.run);
      expect(won(advisory.vulnerable).length, `${advisory.id} on ${advisory.vulnerable}`).toBeGreaterThan(0);
      expect(won(advisory.fixed), `${advisory.id} on ${advisory.fixed}`).toEqual([]);
      expect(showing(data, advisory.package, advisory.fixed, advisory.class).shown).toEqual([]);
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
          if (!fixes.some((advisory) => finding.classes.includes(advisory.class))) expect(version.standing[finding.id], `${version.version} ${finding.id}`).toMatch(/\w{4,}/);
      const raceFixes = ADVISORIES.filter((advisory) => advisory.package === version.package && [advisory.fixed, advisory.vulnerable].includes(version.version))
        .map((advisory) => classOf(advisory.class).race)
        .filter((operations) => operations !== undefined);
      if (!fixes.some((advisory) => classOf(advisory.class).race !== undefined)) continue;
      for (const race of (data.races ?? []).filter((candidate) => candidate.package === version.package && candidate.version === version.version))
        for (const [operation, tally] of Object.entries(race.perOperation))
          if (tally.escapes > 0 && !raceFixes.some((operations) => operations.includes(operation))) expect(version.raceStanding?.[operation], `${version.version} race ${operation}`).toMatch(/\w{4,}/);
    }
  });
});

describe("a class, as a failure shows it", () => {
  // GHSA-9c83-rr99-vfwj and GHSA-j99q-93c9-h869: MCPVault's deny list, anchored at the root, and matched as spelled.
  it("tells a deny list anchored at the root from one matched as spelled, and from one not enforced through a link", async () => {
    const read = PROPERTIES.find((property) => property.id === "protected.read")!;
    const failureOf = async (fork: string) => {
      const target = { ...(await loadTarget(`fixtures/vulnerable/${fork}.ts`)), protect: parseProtectPatterns([".git"], "--protect") };
      const result = await runProperty(read, target, { seed: 1, runs: 3 });
      expect(result.status, fork).toBe("failed");
      return { id: result.id, consequence: result.consequence!, threat: result.threat!, reason: result.reason ?? "", counterexample: result.counterexample ?? "" };
    };
    const anchored = await failureOf("protect-root-only");
    expect(showsClass(anchored, ADVISORY_CLASSES.anchoredDenyList), anchored.counterexample).toBe(true);
    expect(showsClass(anchored, ADVISORY_CLASSES.caseAndDotDenyList)).toBe(false);
    const folded = await failureOf("protect-case-sensitive");
    expect(showsClass(folded, ADVISORY_CLASSES.caseAndDotDenyList), folded.counterexample).toBe(true);
    expect(showsClass(folded, ADVISORY_CLASSES.anchoredDenyList)).toBe(false);
    const linked = await failureOf("protect-not-through-links");
    expect(showsClass(linked, ADVISORY_CLASSES.anchoredDenyList) || showsClass(linked, ADVISORY_CLASSES.caseAndDotDenyList), linked.counterexample).toBe(false);
    // The data judges the classes on the whole failure, then keeps no counterexample.
    expect(keptFinding(anchored).classes).toContain("anchoredDenyList");
    expect(keptFinding(folded).classes).not.toContain("anchoredDenyList");
    expect(keptFinding(folded)).not.toHaveProperty("counterexample");
  });

  it("takes `./.git/config` for the anchored deny list: the name is not the path's first as given", () => {
    const counterexample = [
      "workspace: ws, handed over as its real path",
      "protected (--protect): .git, .obsidian; each protected file holds PROTECTED-SECRET-5c1e and its path",
      "calls, in order (the rule broke at call 2):",
      '  1. client.callTool({"name":"read_note","arguments":{"path":".GIT/config"}})',
      '  2. client.callTool({"name":"read_note","arguments":{"path":"./.obsidian/config"}})',
    ].join("\n");
    const finding = { id: "protected.read", consequence: "protected read" as const, reason: "", counterexample };
    expect(showsClass(finding, ADVISORY_CLASSES.anchoredDenyList)).toBe(true);
    expect(showsClass(finding, ADVISORY_CLASSES.caseAndDotDenyList)).toBe(false);
    expect(showsClass({ ...finding, counterexample: counterexample.replace("call 2)", "call 1)") }, ADVISORY_CLASSES.caseAndDotDenyList)).toBe(true);
  });

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
