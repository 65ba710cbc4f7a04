// `npm run kill-matrix [-- VARIANT...]`: a full audit of every vulnerable variant (or of the named ones,
// whose rows replace theirs), written to fixtures/kill-matrix.json, and the table in
// docs/lessons/README.md regenerated from that file. Slow (minutes): run it after changing a property, an arbitrary or a variant, and
// commit both files.
import { readFile, writeFile } from "node:fs/promises";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { variantTarget } from "../test/support/variant-target.js";
import { PROPERTIES } from "../src/kit/audit/properties/index.js";
import { runProperty } from "../src/kit/audit/runner/run.js";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { KILL_BUDGET, KILL_MATRIX_FILE, KILL_MATRIX_SECTION, type KillMatrix, renderKillMatrix } from "../test/support/kill-matrix-table.js";

const SEED = 1;
const RUNS = 100;

const only = process.argv.slice(2);
const unknown = only.filter((name) => !VULNERABLE_VARIANTS.some((variant) => variant.module === name));
if (unknown.length > 0) throw new Error(`no such variant: ${unknown.join(", ")}`);
const guarantees = PROPERTIES.filter((property) => property.kind === "guarantee");
const previous = only.length === 0 ? [] : (JSON.parse(await readFile(KILL_MATRIX_FILE, "utf8")) as KillMatrix).rows;
const matrix: KillMatrix = { seed: SEED, runs: RUNS, properties: guarantees.map((property) => property.id), rows: [] };
for (const variant of VULNERABLE_VARIANTS) {
  const kept = previous.find((row) => row.module === variant.module);
  if (only.length > 0 && !only.includes(variant.module) && kept !== undefined) {
    matrix.rows.push(kept);
    continue;
  }
  const target = await variantTarget(variant);
  const failed: string[] = [];
  for (const property of guarantees) {
    const budget = variant.caughtBy.includes(property.id) ? KILL_BUDGET : RUNS;
    const runs = Math.max(1, Math.round(budget * (property.budgetScale ?? 1)));
    const result = await runProperty(property, target, { seed: SEED, runs, stopAtFirstFailure: true });
    if (result.status === "failed") failed.push(property.id);
  }
  matrix.rows.push({ module: variant.module, bugClass: variant.bugClass, failed });
  process.stdout.write(`${variant.module}: ${failed.join(", ") || "NOT CAUGHT"}\n`);
}
await writeFile(KILL_MATRIX_FILE, `${JSON.stringify(matrix, null, 2)}\n`);
await writeSectionToFile(KILL_MATRIX_SECTION, renderKillMatrix(matrix));
process.stdout.write(`wrote ${KILL_MATRIX_FILE} and the matrix in ${KILL_MATRIX_SECTION.file}\n`);
