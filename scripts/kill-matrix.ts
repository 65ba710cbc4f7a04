// `npm run kill-matrix`: a full audit of every vulnerable variant, written to fixtures/kill-matrix.json,
// and the README table regenerated from that file. Slow (minutes): run it after changing a property,
// an arbitrary or a variant, and commit both files.
import { readFile, writeFile } from "node:fs/promises";
import { VULNERABLE_VARIANTS } from "../fixtures/vulnerable/catalog.js";
import { PROPERTIES } from "../src/audit/properties/index.js";
import { runProperty } from "../src/audit/run.js";
import { loadTarget } from "../src/audit/target.js";
import { KILL_MATRIX_FILE, type KillMatrix, replaceReadmeMatrix } from "./kill-matrix-table.js";

const SEED = 1;
const RUNS = 100;

const guarantees = PROPERTIES.filter((property) => property.kind === "guarantee");
const matrix: KillMatrix = { seed: SEED, runs: RUNS, properties: guarantees.map((property) => property.id), rows: [] };
for (const variant of VULNERABLE_VARIANTS) {
  const target = await loadTarget(`fixtures/vulnerable/${variant.module}.ts`);
  const failed: string[] = [];
  for (const property of guarantees) {
    const runs = Math.max(1, Math.round(RUNS * (property.budgetScale ?? 1)));
    const result = await runProperty(property, target, { seed: SEED, runs, stopAtFirstFailure: true });
    if (result.status === "failed") failed.push(property.id);
  }
  matrix.rows.push({ module: variant.module, bugClass: variant.bugClass, failed });
  process.stdout.write(`${variant.module}: ${failed.join(", ") || "NOT CAUGHT"}\n`);
}
await writeFile(KILL_MATRIX_FILE, `${JSON.stringify(matrix, null, 2)}\n`);
await writeFile("README.md", replaceReadmeMatrix(await readFile("README.md", "utf8"), matrix));
process.stdout.write(`wrote ${KILL_MATRIX_FILE} and the README matrix\n`);
