/**
 * The race figures of docs/toctou.md: one `toctou --mode race` run per tool set, reduced to what the
 * table shows (no temp paths), and the table drawn from them. `npm run toctou:figures` runs the races
 * and writes both; test/docs-figures.test.ts holds the page to the committed figures.
 */
import type { RaceReport } from "../../src/kit/toctou/race.js";
import type { GeneratedSection } from "./generated-section.js";

export const RACE_FIGURES_FILE = "docs/toctou-race.json";
export const RACE_SECTION: GeneratedSection = { file: "docs/toctou.md", name: "race-figures", command: "npm run toctou:figures" };

export interface RaceFigures {
  machine: { node: string; cpus: number; loadAverage: number };
  seconds: number;
  runs: RaceRunFigures[];
}

export interface RaceRunFigures {
  tools: string;
  read: { calls: number; escapes: number };
  write: { calls: number; escapes: number };
  escapeRate: number;
  firstEscapeMs: number | null;
  sideEffects: { filesWithContent: number; emptyFiles: number; directories: number; other: number };
  swapsPerSecond: number;
}

export function raceRunFigures(report: RaceReport): RaceRunFigures {
  const { filesWithContent, emptyFiles, directories, other } = report.sideEffects;
  return {
    tools: report.tools,
    read: { calls: report.perTool.read.attempts, escapes: report.perTool.read.escapes },
    write: { calls: report.perTool.write.attempts, escapes: report.perTool.write.escapes },
    escapeRate: report.total.escapeRate,
    firstEscapeMs: report.total.firstEscape?.elapsedMs ?? null,
    sideEffects: { filesWithContent, emptyFiles, directories, other },
    swapsPerSecond: report.racer.swapsPerSecond,
  };
}

const SIDE_EFFECT_NAMES: Record<keyof RaceRunFigures["sideEffects"], string> = {
  filesWithContent: "files with content",
  emptyFiles: "empty files",
  directories: "directories",
  other: "other changes",
};

export function renderRaceFigures(figures: RaceFigures): string {
  const rows = figures.runs.map((run) => {
    const effects = (Object.keys(SIDE_EFFECT_NAMES) as (keyof RaceRunFigures["sideEffects"])[]).filter((kind) => run.sideEffects[kind] > 0);
    return `| ${run.tools} | ${run.read.calls + run.write.calls} (${run.read.calls} + ${run.write.calls}) | ${run.read.escapes + run.write.escapes} (${run.read.escapes} + ${run.write.escapes}) | ${(100 * run.escapeRate).toFixed(2)} % | ${
      run.firstEscapeMs === null ? "none" : `${run.firstEscapeMs.toFixed(1)} ms`
    } | ${effects.length === 0 ? "none" : effects.map((kind) => `${run.sideEffects[kind]} ${SIDE_EFFECT_NAMES[kind]}`).join(", ")} | ${Math.round(run.swapsPerSecond)} |`;
  });
  return [
    "| tools | calls (read + write) | content escapes (read + write) | rate | first escape | side effects outside | racer swaps/s |",
    "|---|--:|--:|--:|--:|---|--:|",
    ...rows,
    "",
    `One ${figures.seconds} s run per tool set, one after the other, on ${figures.machine.cpus} CPUs at a load average of ${figures.machine.loadAverage.toFixed(2)} (Node ${figures.machine.node}). The rate depends on the machine and its load; that there is a rate does not.`,
  ].join("\n");
}
