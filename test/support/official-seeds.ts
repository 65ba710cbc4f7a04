/**
 * The seed table of docs/audit-budget.md: the default `audit --mcp` (no budget flag) on the official
 * MCP filesystem server, once per seed, reduced to what the table shows. `npm run official-seeds` runs
 * the audits and writes docs/official-seeds.json and the table; test/docs-figures.test.ts holds the
 * page to the committed figures, and the figures to the page's claim.
 */
import type { JsonReport } from "../../src/kit/audit/reports/report.js";
import type { Counterexample } from "../../src/kit/audit/runner/counterexample.js";
import { namedTwins } from "../../src/kit/sandbox/root-twins.js";
import type { GeneratedSection } from "./generated-section.js";

export const OFFICIAL_SEEDS_FILE = "docs/official-seeds.json";
export const OFFICIAL_SEEDS_SECTION: GeneratedSection = { file: "docs/audit-budget.md", name: "official-seeds", command: "npm run official-seeds" };

/** The property whose failure the table is about: the write through a link to the root's quote or space twin. */
export const WATCHED = "containment.write";

export interface SeedRow {
  seed: number;
  exitCode: number;
  /** containment.write's verdict, its runs and cases (to the failure, when it failed), and the twin its counterexample reaches. */
  status: string;
  runs: number;
  cases: number;
  twin: string | null;
  /** Every failed guarantee of the run, in report order. */
  failed: string[];
  /** The audit's own `judged` total and its wall time. */
  judgedCases: number;
  seconds: number;
}

export interface OfficialSeeds {
  server: string;
  machine: { node: string; cpus: number; loadAverage: number };
  rows: SeedRow[];
}

/**
 * The twin a counterexample's one link to a twin reaches, by its name (`ws'`, or of the case's root);
 * null unless it has exactly one. Read from the case's tree; a result written before counterexamples
 * had one (docs/peers.json, docs/official-seeds.json) from its text, which numbered the twins.
 */
export function twinOf(result: { counterexample?: string | undefined; case?: Counterexample | undefined } | undefined): string | null {
  const workspace = result?.case?.workspace;
  if (workspace !== undefined) {
    const twins = namedTwins(workspace.name);
    const reached = workspace.tree.filter((entry) => entry.crosses && twins.includes(entry.reaches ?? ""));
    return reached.length === 1 ? (reached[0]?.reaches ?? null) : null;
  }
  const text = result?.counterexample ?? "";
  const links = [...text.matchAll(/\$BOX\/sibling(\d+)|sibling(\d+) \(relative\)/g)];
  const number = links.length === 1 ? (links[0]?.[1] ?? links[0]?.[2]) : undefined;
  const root = /^root: (".*") \(/m.exec(text)?.[1];
  return number === undefined ? null : (namedTwins(root === undefined ? "ws" : (JSON.parse(root) as string))[Number(number)] ?? null);
}

export function seedRow(seed: number, exitCode: number, report: JsonReport, seconds: number): SeedRow {
  const watched = report.results.find((result) => result.id === WATCHED);
  return {
    seed,
    exitCode,
    status: watched?.status ?? "missing",
    runs: watched?.runs ?? 0,
    cases: watched?.cases ?? 0,
    twin: watched?.status === "failed" ? twinOf(watched) : null,
    failed: report.results.filter((result) => result.kind === "guarantee" && result.status === "failed").map((result) => result.id),
    judgedCases: report.results.reduce((sum, result) => sum + result.cases, 0),
    seconds,
  };
}

export function renderOfficialSeeds({ server, machine, rows }: OfficialSeeds): string {
  const lines = rows.map(
    (row) =>
      `| ${row.seed} | ${row.exitCode} | ${row.status}${row.twin === null ? "" : ` (\`${row.twin}\`)`} | ${row.runs} | ${row.cases} | ${row.failed.length} | ${row.judgedCases} | ${row.seconds.toFixed(0)} s |`,
  );
  const failing = rows.filter((row) => row.status === "failed").length;
  return [
    `| seed | exit | \`${WATCHED}\` (twin reached) | its runs | its cases | guarantees failed | cases judged | wall time |`,
    "|--:|--:|---|--:|--:|--:|--:|--:|",
    ...lines,
    "",
    `${server}, \`npx workspace-gates audit --seed N --mcp -- node …/dist/index.js {root}\` with the default budget; \`${WATCHED}\` failed at ${failing} of ${rows.length} seeds. Node ${machine.node}, ${machine.cpus} CPUs, load average ${machine.loadAverage.toFixed(2)} at the start.`,
  ].join("\n");
}
