/**
 * `npm run mutate:check [-- REPORT]`: the mutation score of every mutated file, held against this
 * repository's bars. Run after `npm run mutate`; REPORT defaults to Stryker's JSON report.
 *
 * Prints one row per file, the gate code first, and exits 1 when a gate file scores below 100 % or
 * the rest, taken together, scores below REST_BAR; 2 when the report cannot be read. Stryker's own
 * `thresholds.break` sees only the score of all files together, in which the rest's lower bar would
 * hide a drop in a gate file.
 *
 * The score is Stryker's: detected (killed or timed out) over valid mutants (detected, survived, or
 * not covered by any test). Not counted: mutants disabled in the source as equivalent, and invalid
 * ones, which do not compile (the TypeScript checker; `npm test` type-checks, so they fail the build
 * anyway) or crash the run.
 */
import { readFile } from "node:fs/promises";

/** The chapter's tool layer: the four gates, the tools that apply them, failure and approval. */
export const GATE_FILES: readonly string[] = [
  "src/schema.ts",
  "src/fields.ts",
  "src/workspace-path.ts",
  "src/is-inside.ts",
  "src/truncate.ts",
  "src/read-truncated.ts",
  "src/failure.ts",
  "src/approval.ts",
  "src/tools/read.ts",
  "src/tools/write.ts",
  "src/tools/bash.ts",
  "src/workspace-tools.ts",
];

export const GATE_BAR = 100;
export const REST_BAR = 80;

export const DEFAULT_REPORT = "reports/mutation/mutation.json";

/** The part of Stryker's JSON report (mutation-testing-report-schema) this reads. */
export interface MutationReport {
  files: Record<string, { mutants: readonly { status: string }[] }>;
}

export interface Tally {
  detected: number;
  undetected: number;
  /** Disabled in the source as equivalent, each with its reason. */
  equivalent: number;
  /** Does not compile, or crashes the run: not a mutant any test could meet. */
  invalid: number;
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);

export function tally(statuses: readonly string[]): Tally {
  const count = (set: Set<string>) => statuses.filter((status) => set.has(status)).length;
  const detected = count(DETECTED);
  const undetected = count(UNDETECTED);
  const equivalent = count(new Set(["Ignored"]));
  return { detected, undetected, equivalent, invalid: statuses.length - detected - undetected - equivalent };
}

function add(a: Tally, b: Tally): Tally {
  return { detected: a.detected + b.detected, undetected: a.undetected + b.undetected, equivalent: a.equivalent + b.equivalent, invalid: a.invalid + b.invalid };
}

/** Percent of valid mutants detected; `undefined` when no mutant was valid (nothing to score). */
export function score({ detected, undetected }: Tally): number | undefined {
  const valid = detected + undetected;
  return valid === 0 ? undefined : (100 * detected) / valid;
}

export interface Verdict {
  rows: { file: string; gate: boolean; tally: Tally; score: number | undefined }[];
  rest: Tally;
  failures: string[];
}

export function judge(report: MutationReport, gates: readonly string[] = GATE_FILES, restBar = REST_BAR): Verdict {
  const files = Object.keys(report.files).sort((a, b) => Number(gates.includes(b)) - Number(gates.includes(a)) || a.localeCompare(b));
  const rows = files.map((file) => {
    const fileTally = tally((report.files[file]?.mutants ?? []).map((mutant) => mutant.status));
    return { file, gate: gates.includes(file), tally: fileTally, score: score(fileTally) };
  });
  const failures = rows
    .filter((row) => row.gate && row.score !== undefined && row.score < GATE_BAR)
    .map((row) => `${row.file}: ${formatScore(row.score)} (gate code must score ${GATE_BAR} %)`);
  const missingGates = gates.filter((gate) => !files.includes(gate));
  failures.push(...missingGates.map((gate) => `${gate}: not in the report, so not mutated`));
  const rest = rows.filter((row) => !row.gate).reduce((sum, row) => add(sum, row.tally), tally([]));
  const restScore = score(rest);
  if (restScore !== undefined && restScore < restBar) failures.push(`the rest together: ${formatScore(restScore)} (must score at least ${restBar} %)`);
  return { rows, rest, failures };
}

export function formatScore(value: number | undefined): string {
  return value === undefined ? "n/a" : `${(Math.floor(value * 100) / 100).toFixed(2)} %`;
}

function render(verdict: Verdict): string {
  const cells = (file: string, ...rest: string[]) => [file.padEnd(32), ...rest.map((cell, index) => cell.padStart(index === 0 ? 9 : 11))].join(" ");
  const line = (file: string, value: number | undefined, { detected, undetected, equivalent, invalid }: Tally) =>
    cells(file, formatScore(value), ...[detected, undetected, equivalent, invalid].map(String));
  const out = [cells("file", "score", "detected", "undetected", "equivalent", "invalid")];
  for (const gate of [true, false]) {
    out.push(gate ? `gate code (bar ${GATE_BAR} % per file)` : `the rest (bar ${REST_BAR} % together)`);
    for (const row of verdict.rows.filter((candidate) => candidate.gate === gate)) out.push(line(`  ${row.file}`, row.score, row.tally));
  }
  out.push(line("the rest together", score(verdict.rest), verdict.rest));
  return out.join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const path = argv[0] ?? DEFAULT_REPORT;
  let report: MutationReport;
  try {
    report = JSON.parse(await readFile(path, "utf8")) as MutationReport;
  } catch (error) {
    console.error(`mutate:check: cannot read ${path} (run npm run mutate first): ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  const verdict = judge(report);
  console.log(render(verdict));
  for (const failure of verdict.failures) console.error(`mutate:check: ${failure}`);
  return verdict.failures.length === 0 ? 0 : 1;
}

if (process.argv[1]?.endsWith("mutation-score.ts")) process.exitCode = await main(process.argv.slice(2));
