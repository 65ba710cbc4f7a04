/**
 * The race figures of docs/toctou.md: one `toctou --mode race` run per target (the chapter's tools,
 * the verified tools, the whole-surface fixture, the official MCP filesystem server), reduced to what
 * the table shows (no temp
 * paths), and the table drawn from them. `npm run toctou:figures` runs the races and writes both;
 * test/docs-figures.test.ts holds the page to the committed figures.
 */
import { RACE_OPERATIONS, type RaceOperation, type RaceReport } from "../../src/kit/toctou/race.js";
import type { GeneratedSection } from "./generated-section.js";
import { describeSideEffects } from "../../src/kit/toctou/side-effects.js";

export const RACE_FIGURES_FILE = "docs/toctou-race.json";
export const RACE_SECTION: GeneratedSection = { file: "docs/toctou.md", name: "race-figures", command: "npm run toctou:figures" };

export interface RaceFigures {
  machine: { node: string; cpus: number; loadAverage: number };
  runs: RaceRunFigures[];
}

export interface RaceRunFigures {
  tools: string;
  /** How long the race ran: its operations take turns, so a target that offers more races longer. */
  seconds: number;
  /** Per operation the target offers; an absent one was not applicable. */
  operations: Partial<Record<RaceOperation, { calls: number; escapes: number }>>;
  escapeRate: number;
  firstEscapeMs: number | null;
  sideEffects: { filesWithContent: number; emptyFiles: number; directories: number; other: number };
  swapsPerSecond: number;
}

export function raceRunFigures(report: RaceReport, tools = report.tools): RaceRunFigures {
  const { filesWithContent, emptyFiles, directories, other } = report.sideEffects;
  const operations: RaceRunFigures["operations"] = {};
  for (const operation of RACE_OPERATIONS) {
    const tally = report.perOperation[operation];
    if (tally !== undefined) operations[operation] = { calls: tally.attempts, escapes: tally.escapes };
  }
  return {
    tools,
    seconds: report.budget.seconds,
    operations,
    escapeRate: report.total.escapeRate,
    firstEscapeMs: report.total.firstEscape?.elapsedMs ?? null,
    sideEffects: { filesWithContent, emptyFiles, directories, other },
    swapsPerSecond: report.racer.swapsPerSecond,
  };
}

export function renderRaceFigures(figures: RaceFigures): string {
  const row = (name: string, cell: (run: RaceRunFigures) => string) => `| ${name} | ${figures.runs.map(cell).join(" | ")} |`;
  const operationRows = RACE_OPERATIONS.map((operation) =>
    row(`\`${operation}\``, (run) => {
      const figure = run.operations[operation];
      return figure === undefined ? "not applicable" : `${figure.escapes} of ${figure.calls}`;
    }),
  );
  return [
    `| operation | ${figures.runs.map((run) => run.tools).join(" | ")} |`,
    `|---|${figures.runs.map(() => "--:|").join("")}`,
    ...operationRows,
    row("rate", (run) => `${(100 * run.escapeRate).toFixed(2)} %`),
    row("first escape", (run) => (run.firstEscapeMs === null ? "none" : `${run.firstEscapeMs.toFixed(1)} ms`)),
    row("side effects outside", (run) => {
      const effects = run.sideEffects;
      return describeSideEffects({ ...effects, total: effects.filesWithContent + effects.emptyFiles + effects.directories + effects.other, examples: [] });
    }),
    row("racer swaps/s", (run) => String(Math.round(run.swapsPerSecond))),
    row("seconds raced", (run) => `${run.seconds} s`),
    "",
    `An operation's cell is its escapes (evidence found outside) of its calls. One run per target, one after the other, on ${figures.machine.cpus} CPUs at a load average of ${figures.machine.loadAverage.toFixed(2)} (Node ${figures.machine.node}). The rate depends on the machine and its load; that there is a rate does not.`,
  ].join("\n");
}
