/**
 * `npm run mutate:summary`: turns the Stryker results in .stryker-cache/ (written by
 * `npm run mutate:gates` and `npm run mutate:rest`) into the committed summary, docs/mutation-summary.json,
 * and the tables of docs/mutation.md. Per file: a file a run measured takes its new figures, any other
 * keeps the committed ones while it still belongs to that run (`mergeRun`). So refreshing the gate run
 * alone is `npm run mutate:gates`, and refreshing only the gate files that changed is
 * `npx stryker run --mutate a.ts,b.ts && npm run mutate:summary`.
 */
import { readFile, writeFile } from "node:fs/promises";
import gateRun from "../stryker.config.mjs";
import restRun from "../stryker.rest.config.mjs";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { MUTATION_SECTION, type MutationSummary, RUNS, type StrykerResults, SUMMARY_FILE, gateFiles, mergeRun, readSummary, renderMarkdown, restFiles } from "../test/support/mutation-summary.js";

const CONFIGS = { gates: gateRun, rest: restRun };
const previous = await readSummary().catch(() => ({ gates: {}, rest: {} }) as MutationSummary);
const gates = new Set(await gateFiles());
const rest = await restFiles();
const belongsTo = { gates: (file: string) => gates.has(file), rest: (file: string) => rest.includes(file) };
const summary = { ...previous };
for (const run of RUNS) {
  const path = CONFIGS[run].incrementalFile;
  if (path === undefined) throw new Error(`the ${run} run's Stryker config has no incrementalFile: its results are not kept`);
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  const results = text === undefined ? undefined : (JSON.parse(text) as StrykerResults);
  summary[run] = mergeRun(previous[run], results, belongsTo[run]);
  const measured = Object.keys(results?.files ?? {});
  const kept = Object.keys(summary[run]).filter((file) => !measured.includes(file));
  const dropped = Object.keys(previous[run]).filter((file) => !(file in summary[run]));
  process.stdout.write(
    `${run}: ${measured.length > 0 ? `${measured.length} files measured (${path})` : `no results at ${path}`}` +
      `${kept.length > 0 ? `; ${kept.length} kept as the committed summary had them` : ""}` +
      `${dropped.length > 0 ? `; dropped ${dropped.join(", ")} (gone, or no longer this run's)` : ""}\n`,
  );
}
await writeFile(SUMMARY_FILE, `${JSON.stringify(summary, null, 2)}\n`);
await writeSectionToFile(MUTATION_SECTION, renderMarkdown(summary, rest));
process.stdout.write(`wrote ${SUMMARY_FILE} and the tables in ${MUTATION_SECTION.file}\n`);
