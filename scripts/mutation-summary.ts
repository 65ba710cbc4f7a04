/**
 * `npm run mutate:summary`: turns the Stryker results in .stryker-cache/ (written by
 * `npm run mutate:gates` and `npm run mutate:rest`) into the committed summary, docs/mutation-summary.json,
 * and the tables of docs/mutation.md. A run whose results are not in the cache keeps its entry from
 * the summary as committed (without the files that are gone or that the other run now measures), so
 * refreshing the gate run alone is `npm run mutate:gates` (which ends by running this).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import gateRun from "../stryker.config.mjs";
import restRun from "../stryker.rest.config.mjs";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { MUTATION_SECTION, type MutationSummary, RUNS, type StrykerResults, SUMMARY_FILE, readSummary, renderMarkdown, summarizeRun } from "../test/support/mutation-summary.js";

const CONFIGS = { gates: gateRun, rest: restRun };
const previous = await readSummary().catch(() => ({ gates: {}, rest: {} }) as MutationSummary);
const summary = { ...previous };
for (const run of RUNS) {
  const path = CONFIGS[run].incrementalFile;
  if (path === undefined) throw new Error(`the ${run} run's Stryker config has no incrementalFile: its results are not kept`);
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (text === undefined) {
    const other = run === "gates" ? summary.rest : summary.gates;
    summary[run] = Object.fromEntries(Object.entries(previous[run]).filter(([file]) => existsSync(file) && !(file in other)));
    const dropped = Object.keys(previous[run]).filter((file) => !(file in summary[run]));
    process.stdout.write(`${run}: no results at ${path}; the committed summary's entry is kept${dropped.length > 0 ? `, without ${dropped.join(", ")} (gone, or measured by the other run now)` : ""}\n`);
    continue;
  }
  summary[run] = summarizeRun(JSON.parse(text) as StrykerResults);
  process.stdout.write(`${run}: ${Object.keys(summary[run]).length} files from ${path}\n`);
}
await writeFile(SUMMARY_FILE, `${JSON.stringify(summary, null, 2)}\n`);
await writeSectionToFile(MUTATION_SECTION, renderMarkdown(summary));
process.stdout.write(`wrote ${SUMMARY_FILE} and the tables in ${MUTATION_SECTION.file}\n`);
