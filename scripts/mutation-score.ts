/**
 * `npm run mutate:check [-- --readme]`: the mutation score of every mutated file, held against this
 * repository's bars. Reads the results the two Stryker runs keep under fixtures/mutation/ (the gate
 * code from stryker.config.mjs, the rest from stryker.rest.config.mjs); each holds every mutant of
 * its run, reused or tested again, so it is complete after an incremental run too.
 *
 * Prints one row per file, the gate code first, and exits 1 when a gate file scores below 100 %, an
 * equivalent mutant gives no reason, or the rest, taken together, scores below REST_BAR; 2 when the
 * results cannot be read. With `--readme` it also writes the table into README. The bars are the
 * runs' own (`thresholds.break`, so `npm run mutate` fails below them too); this adds what a run's
 * single score cannot say: which file, and equivalents that give no reason.
 *
 * The score is Stryker's: detected (killed or timed out) over valid mutants (detected, survived, or
 * not covered by any test). Not counted: mutants disabled in the source as equivalent; static mutants
 * of the rest, which that run does not test (stryker.rest.config.mjs says why); and invalid ones,
 * which do not compile (the TypeScript checker; `npm test` type-checks, so they fail the build anyway)
 * or crash the run.
 */
import { readFile, writeFile } from "node:fs/promises";
import gateRun, { GATE_BAR, GATE_FILES } from "../stryker.config.mjs";
import restRun, { REST_BAR } from "../stryker.rest.config.mjs";
import { type ReadmeSection, replaceSection } from "./readme-section.js";

/** Where each run keeps its results: read from the runs' own configs, so the two cannot drift apart. */
export const RESULTS_FILES: readonly string[] = [gateRun, restRun].map(({ incrementalFile }) => {
  if (incrementalFile === undefined) throw new Error("a Stryker config without incrementalFile: its results are not kept");
  return incrementalFile;
});

export const MUTATION_SECTION: ReadmeSection = { name: "mutation-score", command: "npm run mutate:check -- --readme" };

/** Stryker's reason for a mutant disabled by a comment that gives none. */
const NO_REASON = "Ignored using a comment";
const STATIC_NOT_RUN = 'Static mutant (and "ignoreStatic" was enabled)';

/** The part of Stryker's JSON report (mutation-testing-report-schema) this reads. */
export interface MutationReport {
  files: Record<string, { mutants: readonly Mutant[] }>;
}

export interface Mutant {
  status: string;
  statusReason?: string;
  location?: { start: { line: number } };
}

export interface Tally {
  detected: number;
  undetected: number;
  /** Disabled in the source as equivalent, each with its reason. */
  equivalent: number;
  /** Static mutants of a run that skips them: not tested, so neither detected nor survived. */
  notRun: number;
  /** Does not compile, or crashes the run: not a mutant any test could meet. */
  invalid: number;
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);

export function tally(mutants: readonly Mutant[]): Tally {
  const count = (matches: (mutant: Mutant) => boolean) => mutants.filter(matches).length;
  const detected = count((mutant) => DETECTED.has(mutant.status));
  const undetected = count((mutant) => UNDETECTED.has(mutant.status));
  const notRun = count((mutant) => mutant.status === "Ignored" && mutant.statusReason === STATIC_NOT_RUN);
  const equivalent = count((mutant) => mutant.status === "Ignored") - notRun;
  return { detected, undetected, equivalent, notRun, invalid: mutants.length - detected - undetected - equivalent - notRun };
}

function add(a: Tally, b: Tally): Tally {
  return {
    detected: a.detected + b.detected,
    undetected: a.undetected + b.undetected,
    equivalent: a.equivalent + b.equivalent,
    notRun: a.notRun + b.notRun,
    invalid: a.invalid + b.invalid,
  };
}

/** Percent of valid mutants detected; `undefined` when no mutant was valid (nothing to score). */
export function score({ detected, undetected }: Tally): number | undefined {
  const valid = detected + undetected;
  return valid === 0 ? undefined : (100 * detected) / valid;
}

export interface Verdict {
  /** The bar the rest was judged against. */
  restBar: number;
  rows: { file: string; gate: boolean; tally: Tally; score: number | undefined }[];
  rest: Tally;
  failures: string[];
}

export function judge(report: MutationReport, gates: readonly string[] = GATE_FILES, restBar = REST_BAR): Verdict {
  const files = Object.keys(report.files).sort((a, b) => Number(gates.includes(b)) - Number(gates.includes(a)) || a.localeCompare(b));
  const failures: string[] = [];
  const rows = files.map((file) => {
    const mutants = report.files[file]?.mutants ?? [];
    for (const mutant of mutants.filter((candidate) => candidate.status === "Ignored" && candidate.statusReason === NO_REASON)) {
      failures.push(`${file}:${mutant.location?.start.line ?? "?"}: an equivalent mutant without a reason (write it after the Stryker disable comment)`);
    }
    const fileTally = tally(mutants);
    return { file, gate: gates.includes(file), tally: fileTally, score: score(fileTally) };
  });
  for (const row of rows.filter((candidate) => candidate.gate)) {
    if (row.tally.notRun > 0) failures.push(`${row.file}: ${row.tally.notRun} static mutants not run (gate code is tested with its static mutants)`);
    if (row.score !== undefined && row.score < GATE_BAR) failures.push(`${row.file}: ${formatScore(row.score)} (gate code must score ${GATE_BAR} %)`);
  }
  failures.push(...gates.filter((gate) => !files.includes(gate)).map((gate) => `${gate}: not in the results, so not mutated`));
  const rest = rows.filter((row) => !row.gate).reduce((sum, row) => add(sum, row.tally), tally([]));
  const restScore = score(rest);
  if (restScore !== undefined && restScore < restBar) failures.push(`the rest together: ${formatScore(restScore)} (must score at least ${restBar} %)`);
  return { restBar, rows, rest, failures };
}

export function formatScore(value: number | undefined): string {
  return value === undefined ? "n/a" : `${(Math.floor(value * 100) / 100).toFixed(2)} %`;
}

const COLUMNS = ["file", "score", "killed", "survived", "equivalent", "static, not run", "invalid"];

function cells(label: string, row: { tally: Tally; score: number | undefined }): string[] {
  const { detected, undetected, equivalent, notRun, invalid } = row.tally;
  return [label, formatScore(row.score), ...[detected, undetected, equivalent, notRun, invalid].map(String)];
}

function groups(verdict: Verdict): { heading: string; rows: string[][] }[] {
  const files = (gate: boolean) => verdict.rows.filter((row) => row.gate === gate).map((row) => cells(row.file, row));
  return [
    { heading: `gate code (bar ${GATE_BAR} % per file)`, rows: files(true) },
    { heading: `the rest (bar ${verdict.restBar} % together)`, rows: [...files(false), cells("the rest together", { tally: verdict.rest, score: score(verdict.rest) })] },
  ];
}

/** The table for a terminal. */
export function renderText(verdict: Verdict): string {
  const line = ([file = "", ...numbers]: string[]) => [file.padEnd(34), ...numbers.map((cell) => cell.padStart(11))].join(" ");
  return [line(COLUMNS), ...groups(verdict).flatMap(({ heading, rows }) => [heading, ...rows.map(([file = "", ...rest]) => line([`  ${file}`, ...rest]))])].join("\n");
}

/** The table for README; "killed" counts timeouts too, as Stryker's score does. */
export function renderMarkdown(verdict: Verdict): string {
  const row = (values: string[]) => `| ${values.join(" | ")} |`;
  return groups(verdict)
    .map(({ heading, rows }) => [`**${heading}**`, "", row(COLUMNS), `|---|${COLUMNS.slice(1).map(() => "--:").join("|")}|`, ...rows.map(([file = "", ...rest]) => row([file.includes("/") ? `\`${file}\`` : file, ...rest]))].join("\n"))
    .join("\n\n");
}

/** Both runs' results as one report; a file is in one run only. */
export async function readResults(paths: readonly string[] = RESULTS_FILES): Promise<MutationReport> {
  const reports = await Promise.all(paths.map(async (path) => JSON.parse(await readFile(path, "utf8")) as MutationReport));
  return { files: Object.assign({}, ...reports.map((report) => report.files)) as MutationReport["files"] };
}

async function main(argv: readonly string[]): Promise<number> {
  let report: MutationReport;
  try {
    report = await readResults();
  } catch (error) {
    console.error(`mutate:check: cannot read ${RESULTS_FILES.join(" and ")} (run npm run mutate first): ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  const verdict = judge(report);
  console.log(renderText(verdict));
  if (argv.includes("--readme")) await writeFile("README.md", replaceSection(await readFile("README.md", "utf8"), MUTATION_SECTION, renderMarkdown(verdict)));
  for (const failure of verdict.failures) console.error(`mutate:check: ${failure}`);
  return verdict.failures.length === 0 ? 0 : 1;
}

if (process.argv[1]?.endsWith("mutation-score.ts")) process.exitCode = await main(process.argv.slice(2));
