/**
 * The figures of `npm run bench` and their table: what each gate costs next to the bare call it wraps.
 * `npm run bench -- --docs` writes docs/bench.json and the table of docs/bench.md from one run;
 * test/docs-figures.test.ts holds the page to the committed figures.
 */
import type { GeneratedSection } from "./generated-section.js";

export const BENCH_FILE = "docs/bench.json";
export const BENCH_SECTION: GeneratedSection = { file: "docs/bench.md", name: "bench", command: "npm run bench -- --docs" };

export type Unit = "µs" | "ms" | "s" | "MiB" | "cases/s" | "calls/s";

export interface Figure {
  value: number;
  unit: Unit;
}

export interface Row {
  section: string;
  measure: string;
  gated: Figure;
  /** The bare call measured beside it; `failed` when the bare call cannot do the job at all. */
  bare?: { label: string } & (Figure | { failed: string });
  ratio?: number;
  target?: { text: string; holds: boolean };
  note?: string;
}

export interface BenchFigures {
  machine: { node: string; platform: string; cpus: number; loadAverage: number };
  seconds: number;
  rows: Row[];
}

function formatFigure(figure: Figure): string {
  const digits = figure.value >= 100 ? 0 : figure.value >= 10 ? 1 : 2;
  return `${figure.value.toFixed(digits)} ${figure.unit}`;
}

/** The table, then one line on the machine and the run. */
export function renderBench({ machine, seconds, rows }: BenchFigures): string {
  const header = ["measure", "gated", "bare call", "ratio", "target", "holds", "note"];
  const lines = rows.map((row) => [
    row.measure,
    formatFigure(row.gated),
    row.bare === undefined ? "—" : "failed" in row.bare ? `${row.bare.label}: fails (${row.bare.failed})` : `${row.bare.label}: ${formatFigure(row.bare)}`,
    row.ratio === undefined ? "—" : `${row.ratio.toFixed(2)}×`,
    row.target?.text ?? "—",
    row.target === undefined ? "—" : row.target.holds ? "yes" : "**no**",
    row.note ?? "",
  ]);
  const toLine = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [
    toLine(header),
    toLine(header.map(() => "---")),
    ...lines.map(toLine),
    "",
    `Sections measured: ${[...new Set(rows.map((row) => row.section))].join(", ")}. Node ${machine.node}, ${machine.platform}, ${machine.cpus} CPUs, load average ${machine.loadAverage.toFixed(2)} at the start; the bench took ${seconds.toFixed(0)} s.`,
  ].join("\n");
}
