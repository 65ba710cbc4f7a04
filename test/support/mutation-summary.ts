/**
 * The committed record of the two mutation runs (stryker.config.mjs for the gate code,
 * stryker.rest.config.mjs for the rest): per mutated file, the tally of its mutants, the reason given
 * for each equivalent one, and the SHA-256 of the source as Stryker mutated it. Stryker's own results
 * (full copies of every source and test file) stay in the gitignored .stryker-cache/; this summary is
 * what a reader and CI need.
 *
 * `judge` holds the summary against this repository's bars and against the files as they are now: a
 * gate file whose content differs from what the gate run measured fails ("run npm run mutate:gates"),
 * because its score says nothing about the code that would ship. A file of the rest that changed is
 * only marked: re-measuring the rest takes over an hour, so it is redone by whoever changes that code.
 *
 * The score is Stryker's: detected (killed or timed out) over valid mutants (detected, survived, or
 * not covered by any test). Not counted: mutants disabled in the source as equivalent; static mutants
 * of the rest, which that run does not test; and invalid ones, which do not compile (the TypeScript
 * checker; `npm test` type-checks, so they fail the build anyway) or crash the run.
 */
import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { GATE_BAR, GATE_FILES } from "../../stryker.config.mjs";
import restRun, { REST_BAR } from "../../stryker.rest.config.mjs";
import type { GeneratedSection } from "./generated-section.js";

export const SUMMARY_FILE = "docs/mutation-summary.json";
export const MUTATION_SECTION: GeneratedSection = { file: "docs/mutation.md", name: "mutation-score", command: "npm run mutate:summary" };
export const RUNS = ["gates", "rest"] as const;
export type RunName = (typeof RUNS)[number];

/** Stryker's reason for a mutant disabled by a comment that gives none. */
const NO_REASON = "Ignored using a comment";
const STATIC_NOT_RUN = 'Static mutant (and "ignoreStatic" was enabled)';

/** The part of Stryker's results (its JSON report and its incremental file share the schema) read here. */
export interface StrykerResults {
  files: Record<string, { source: string; mutants: readonly Mutant[] }>;
}

export interface Mutant {
  status: string;
  statusReason?: string;
  mutatorName?: string;
  replacement?: string;
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

export interface Equivalent {
  line: number;
  mutator: string;
  /** What the mutant puts in place of the original code, cut to a readable length. */
  replacement: string;
  /** The reason written after the Stryker disable comment; `null` when the comment gives none. */
  reason: string | null;
}

export interface FileSummary {
  sha256: string;
  tally: Tally;
  equivalents: Equivalent[];
}

export type MutationSummary = Record<RunName, Record<string, FileSummary>>;

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

export function formatScore(value: number | undefined): string {
  return value === undefined ? "n/a" : `${(Math.floor(value * 100) / 100).toFixed(2)} %`;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** One run's results as the summary keeps them: no source text, no machine path, files sorted. */
export function summarizeRun(results: StrykerResults): Record<string, FileSummary> {
  const files = Object.keys(results.files).sort();
  return Object.fromEntries(
    files.map((file) => {
      const { source, mutants } = results.files[file] ?? { source: "", mutants: [] };
      const equivalents = mutants
        .filter((mutant) => mutant.status === "Ignored" && mutant.statusReason !== STATIC_NOT_RUN)
        .map((mutant) => ({
          line: mutant.location?.start.line ?? 0,
          mutator: mutant.mutatorName ?? "?",
          replacement: shorten(mutant.replacement ?? ""),
          reason: mutant.statusReason === undefined || mutant.statusReason === NO_REASON ? null : mutant.statusReason,
        }))
        .sort((a, b) => a.line - b.line || a.mutator.localeCompare(b.mutator));
      return [file, { sha256: sha256(source), tally: tally(mutants), equivalents }];
    }),
  );
}

/**
 * A run's entry after a run: each file it mutated as it measured it now, and every other file as the
 * summary last had it, while it still belongs to this run (`belongs`: it exists and the run's config
 * mutates it). A run limited with `--mutate` to the files that changed thus refreshes those alone; a
 * kept entry still carries its file's hash, so it fails mutate:check as soon as that file changes.
 * `results` undefined (no run on this machine) keeps every entry that still belongs.
 */
export function mergeRun(previous: Record<string, FileSummary>, results: StrykerResults | undefined, belongs: (file: string) => boolean): Record<string, FileSummary> {
  const measured = results === undefined ? {} : summarizeRun(results);
  const kept = Object.entries(previous).filter(([file]) => !(file in measured) && belongs(file));
  return Object.fromEntries([...kept, ...Object.entries(measured)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const REPLACEMENT_MAX = 40;

function shorten(code: string): string {
  const line = code.replace(/\s+/g, " ").trim();
  return line.length <= REPLACEMENT_MAX ? line : `${line.slice(0, REPLACEMENT_MAX - 1)}…`;
}

export interface Row {
  file: string;
  gate: boolean;
  tally: Tally;
  score: number | undefined;
  /** The file's content now differs from what its run measured (or the file is gone). */
  stale: boolean;
}

export interface Verdict {
  rows: Row[];
  rest: Tally;
  /** Files of the rest that changed since the rest run: reported, not failed. */
  staleRest: string[];
  failures: string[];
}

export interface Bars {
  gates: readonly string[];
  gateBar: number;
  restBar: number;
}

/**
 * The files a run's `mutate` patterns name among the files under src/ now, as Stryker reads them:
 * paths, or globs with `*` and `**`; a pattern after `!` leaves its files out.
 */
export async function mutatedFiles(patterns: readonly string[]): Promise<string[]> {
  const files = (await readdir("src", { recursive: true })).map((file) => `src/${file.split("\\").join("/")}`);
  const regex = (pattern: string) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("**/", "\u0000").replaceAll("*", "[^/]*").replaceAll("\u0000", "(?:.*/)?")}$`);
  const taken = patterns.filter((pattern) => !pattern.startsWith("!")).map(regex);
  const left = patterns.filter((pattern) => pattern.startsWith("!")).map((pattern) => regex(pattern.slice(1)));
  return files.filter((file) => taken.some((pattern) => pattern.test(file)) && !left.some((pattern) => pattern.test(file))).sort();
}

/** The gate files as `GATE_FILES` names them, matched against the files under src/ now. */
export function gateFiles(patterns: readonly string[] = GATE_FILES): Promise<string[]> {
  return mutatedFiles(patterns);
}

/** The files the rest run mutates now: stryker.rest.config.mjs's `mutate`, everything under src/ but the gate code. */
export function restFiles(): Promise<string[]> {
  return mutatedFiles((restRun.mutate ?? []).filter((pattern) => pattern !== undefined));
}

/** This repository's bars, with the gate files as they are now. */
export async function repositoryBars(): Promise<Bars> {
  return { gates: await gateFiles(), gateBar: GATE_BAR, restBar: REST_BAR };
}

/**
 * The summary against the bars. `current` maps a file to the SHA-256 of its content now (undefined when
 * the file is gone); pass the summary's own hashes to judge the scores alone.
 */
export function judge(summary: MutationSummary, current: (file: string) => string | undefined, bars: Bars): Verdict {
  const failures: string[] = [];
  const rowOf = (run: RunName, file: string): Row => {
    const entry = summary[run][file] as FileSummary;
    return { file, gate: run === "gates", tally: entry.tally, score: score(entry.tally), stale: current(file) !== entry.sha256 };
  };
  const gateRows = bars.gates.filter((file) => file in summary.gates).map((file) => rowOf("gates", file));
  const restRows = Object.keys(summary.rest)
    .filter((file) => !bars.gates.includes(file))
    .map((file) => rowOf("rest", file));
  for (const [file, entry] of [...Object.entries(summary.gates), ...Object.entries(summary.rest)]) {
    for (const equivalent of entry.equivalents.filter((candidate) => candidate.reason === null)) {
      failures.push(`${file}:${equivalent.line}: an equivalent mutant without a reason (write it after the Stryker disable comment)`);
    }
  }
  for (const file of bars.gates.filter((gate) => !(gate in summary.gates))) {
    failures.push(`${file}: not mutated by the gate run (run npm run mutate:gates)`);
  }
  for (const row of gateRows) {
    if (row.stale) failures.push(`${row.file}: changed since the gate run measured it (run npm run mutate:gates)`);
    if (row.tally.notRun > 0) failures.push(`${row.file}: ${row.tally.notRun} static mutants not run (gate code is tested with its static mutants)`);
    if (row.score !== undefined && row.score < bars.gateBar) failures.push(`${row.file}: ${formatScore(row.score)} (gate code must score ${bars.gateBar} %)`);
  }
  const rest = restRows.reduce((sum, row) => add(sum, row.tally), tally([]));
  const restScore = score(rest);
  if (restScore !== undefined && restScore < bars.restBar) failures.push(`the rest together: ${formatScore(restScore)} (must score at least ${bars.restBar} %)`);
  return { rows: [...gateRows, ...restRows], rest, staleRest: restRows.filter((row) => row.stale).map((row) => row.file), failures };
}

const COLUMNS = ["file", "score", "killed", "survived", "equivalent", "static, not run", "invalid"];

function cells(label: string, row: { tally: Tally; score: number | undefined }): string[] {
  const { detected, undetected, equivalent, notRun, invalid } = row.tally;
  return [label, formatScore(row.score), ...[detected, undetected, equivalent, notRun, invalid].map(String)];
}

function groups(verdict: Verdict, bars: Omit<Bars, "gates">): { heading: string; rows: string[][] }[] {
  const files = (gate: boolean) => verdict.rows.filter((row) => row.gate === gate).map((row) => cells(row.file, row));
  return [
    { heading: `gate code (bar ${bars.gateBar} % per file)`, rows: files(true) },
    { heading: `the rest (bar ${bars.restBar} % together)`, rows: [...files(false), cells("the rest together", { tally: verdict.rest, score: score(verdict.rest) })] },
  ];
}

/** The table for a terminal, with the files that changed since their run marked. */
export function renderText(verdict: Verdict, bars: Bars): string {
  const stale = new Set(verdict.rows.filter((row) => row.stale).map((row) => row.file));
  const line = ([file = "", ...numbers]: string[]) => [file.padEnd(44), ...numbers.map((cell) => cell.padStart(11))].join(" ");
  return [
    line(COLUMNS),
    ...groups(verdict, bars).flatMap(({ heading, rows }) => [heading, ...rows.map(([file = "", ...rest]) => line([`  ${file}${stale.has(file) ? " *" : ""}`, ...rest]))]),
    ...(stale.size > 0 ? ["* changed since its mutation run measured it"] : []),
  ].join("\n");
}

/**
 * The page's tables: the scores and every equivalent mutant's reason, from the summary, and the files
 * of the rest run now (`restNow`) that its last run did not measure, so that the page lists every file
 * the rest run would mutate. The page changes only when the summary or that list does; whether a file
 * changed since, or joined the gate code, is mutate:check's to say.
 */
export function renderMarkdown(summary: MutationSummary, restNow: readonly string[], bars: Omit<Bars, "gates"> = { gateBar: GATE_BAR, restBar: REST_BAR }): string {
  const verdict = judge(summary, () => undefined, { ...bars, gates: Object.keys(summary.gates) });
  const row = (values: string[]) => `| ${values.join(" | ")} |`;
  const code = (file: string) => (file.includes("/") ? `\`${file}\`` : file);
  const tables = groups(verdict, bars).map(({ heading, rows }) =>
    [`**${heading}**`, "", row(COLUMNS), `|---|${COLUMNS.slice(1).map(() => "--:").join("|")}|`, ...rows.map(([file = "", ...rest]) => row([code(file), ...rest]))].join("\n"),
  );
  const unmeasured = restNow.filter((file) => !(file in summary.rest));
  const notMeasured = `**files of the rest its last run did not measure** (new or split off since, or with no code to mutate; \`npm run mutate:rest\` measures them): ${unmeasured.map(code).join(", ") || "none"}.`;
  const equivalents = RUNS.flatMap((run) => Object.entries(summary[run]).flatMap(([file, entry]) => entry.equivalents.map((equivalent) => ({ file, ...equivalent }))));
  const reasons = [
    "**equivalent mutants, each with the reason its disable comment gives**",
    "",
    row(["file", "line", "mutator", "mutant", "reason"]),
    "|---|--:|---|---|---|",
    ...equivalents.map((equivalent) => row([code(equivalent.file), String(equivalent.line), equivalent.mutator, `\`${equivalent.replacement.replaceAll("|", "\\|")}\``, equivalent.reason?.replaceAll("|", "\\|") ?? "**none given**"])),
  ].join("\n");
  return [...tables, notMeasured, reasons].join("\n\n");
}

export async function readSummary(path = SUMMARY_FILE): Promise<MutationSummary> {
  return JSON.parse(await readFile(path, "utf8")) as MutationSummary;
}

/** The SHA-256 of each file as it is now; undefined for a file that is gone. */
export async function currentHashes(files: readonly string[]): Promise<(file: string) => string | undefined> {
  const hashes = new Map<string, string>();
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text !== undefined) hashes.set(file, sha256(text));
  }
  return (file) => hashes.get(file);
}
