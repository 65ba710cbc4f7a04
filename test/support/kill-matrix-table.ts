/**
 * The kill matrix as data and as a table in docs/lessons/README.md: which audit properties fail each
 * vulnerable variant. `npm run kill-matrix` writes the data from real audit runs and the table from
 * the data; nothing here is typed by hand, and the kill-matrix test checks the page against the data.
 */
import type { GeneratedSection } from "./generated-section.js";

export const KILL_MATRIX_FILE = "fixtures/kill-matrix.json";

/** Runs a property may take to catch a variant its catalogue entry names (the kill-matrix test's). */
export const KILL_BUDGET = 300;

export const KILL_MATRIX_SECTION: GeneratedSection = { file: "docs/lessons/README.md", name: "kill-matrix", command: "npm run kill-matrix" };

export interface KillMatrix {
  seed: number;
  runs: number;
  properties: string[];
  rows: { module: string; bugClass: string; failed: string[] }[];
}

export function renderKillMatrix(matrix: KillMatrix): string {
  const header = `| variant | bug class | ${matrix.properties.join(" | ")} |`;
  const rule = `|---|---|${matrix.properties.map(() => ":-:").join("|")}|`;
  const rows = matrix.rows.map(
    (row) => `| \`${row.module}\` | ${row.bugClass} | ${matrix.properties.map((id) => (row.failed.includes(id) ? "✗" : "")).join(" | ")} |`,
  );
  const caption = `✗ = the property fails the variant (seed ${matrix.seed}; each property runs until its first failure, up to ${matrix.runs} runs, or ${KILL_BUDGET} for the properties the catalogue names, as in the kill-matrix test).`;
  return [header, rule, ...rows, "", caption].join("\n");
}
