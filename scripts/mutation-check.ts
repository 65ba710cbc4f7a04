/**
 * `npm run mutate:check`: the committed mutation summary (docs/mutation-summary.json) held to this
 * repository's bars and to the files as they are now. Runs no mutant, so CI can afford it on every
 * change. Prints one row per file, the gate code first, and exits 1 when a gate file scores below
 * 100 %, changed since the gate run measured it, or is missing from that run; when an equivalent
 * mutant gives no reason; or when the rest, taken together, scores below REST_BAR. Exits 2 when the
 * summary cannot be read. Files of the rest that changed since are listed, not failed
 * (test/support/mutation-summary.ts says why).
 */
import { RUNS, SUMMARY_FILE, currentHashes, judge, readSummary, renderText, repositoryBars } from "../test/support/mutation-summary.js";

async function main(): Promise<number> {
  const summary = await readSummary().catch((error: unknown) => {
    console.error(`mutate:check: cannot read ${SUMMARY_FILE} (run npm run mutate:gates): ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  if (summary === undefined) return 2;
  const bars = await repositoryBars();
  const files = [...new Set([...bars.gates, ...RUNS.flatMap((run) => Object.keys(summary[run]))])];
  const verdict = judge(summary, await currentHashes(files), bars);
  console.log(renderText(verdict, bars));
  if (verdict.staleRest.length > 0)
    console.log(`${verdict.staleRest.length} files of the rest changed since the rest run; re-measure them with npm run mutate:rest when you change them`);
  for (const failure of verdict.failures) console.error(`mutate:check: ${failure}`);
  return verdict.failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
