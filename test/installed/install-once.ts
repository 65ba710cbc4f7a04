/**
 * The globalSetup of vitest.installed.config.ts: `npm pack` and the install into a fresh project,
 * once for all the checks of test/installed/ (each packed and installed on its own before, a build
 * and an install from the registry each). Each check copies that project (test/support/installed.ts)
 * and works in its copy, with a TMPDIR of its own; the project is removed when the checks are done.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { INSTALLED_PROJECT, run, userEnv } from "../support/installed.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(join(tmpdir(), "workspace-gates-installed-once-"));
  const consumer = join(scratch, "consumer");
  const installTmp = join(scratch, "tmp");
  await mkdir(consumer);
  await mkdir(installTmp);
  const { stdout } = await run("npm", ["pack", "--pack-destination", scratch], { maxBuffer: 1 << 24 });
  const tarball = stdout.trim().split("\n").at(-1) as string;
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await run("npm", ["install", "--no-audit", "--no-fund", join(scratch, tarball)], { cwd: consumer, env: userEnv(installTmp), maxBuffer: 1 << 24 });
  project.provide(INSTALLED_PROJECT, { consumer, tarball: join(scratch, tarball) });
  return () => rm(scratch, { recursive: true, force: true });
}
