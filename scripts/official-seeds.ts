// `npm run official-seeds`: the default `audit --mcp` on the official MCP filesystem server (the
// gallery's pinned version, installed from the npm registry), once for each seed from 1 to 20. Keeps
// the figures in docs/official-seeds.json and draws the table of docs/audit-budget.md from them. Takes
// a minute or more a seed: the default budget, the shrinking of what failed, and the server's starts.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../src/kit/cli.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { writeSectionToFile } from "../test/support/generated-section.js";
import { installOfficialServer } from "../test/support/official-server.js";
import { OFFICIAL_SEEDS_FILE, OFFICIAL_SEEDS_SECTION, type OfficialSeeds, renderOfficialSeeds, seedRow } from "../test/support/official-seeds.js";

const SEEDS = Array.from({ length: 20 }, (_, index) => index + 1);

const dir = await mkdtemp(join(tmpdir(), "workspace-gates-seeds-"));
process.stdout.write("installing the official MCP filesystem server from the registry\n");
const official = await installOfficialServer();
try {
  const figures: OfficialSeeds = { server: official.name, machine: { node: process.version, cpus: cpus().length, loadAverage: loadavg()[0] ?? 0 }, rows: [] };
  for (const seed of SEEDS) {
    const json = join(dir, `${seed}.json`);
    const started = performance.now();
    const code = await main(["audit", "--seed", String(seed), "--json", json, "--mcp", "--", ...official.words], { stdout: () => {}, stderr: () => {} });
    const row = seedRow(seed, code, JSON.parse(await readFile(json, "utf8")) as JsonReport, (performance.now() - started) / 1_000);
    process.stdout.write(`seed ${seed}: exit ${code}, ${row.status}${row.twin === null ? "" : ` (${row.twin})`} after ${row.runs} runs\n`);
    figures.rows.push(row);
  }
  await writeFile(OFFICIAL_SEEDS_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  await writeSectionToFile(OFFICIAL_SEEDS_SECTION, renderOfficialSeeds(figures));
  process.stdout.write(`wrote ${OFFICIAL_SEEDS_FILE} and the table in ${OFFICIAL_SEEDS_SECTION.file}\n`);
} finally {
  await rm(dir, { recursive: true, force: true });
  await official.remove();
}
