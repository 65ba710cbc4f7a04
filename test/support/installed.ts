/**
 * The package the way users meet it, for the checks in test/installed/: `npm pack`, installed into a
 * fresh project (`consumer`) that has none of this repository's devDependencies, driven through
 * `node_modules/.bin/workspace-gates` with the environment of a user's shell and a private TMPDIR.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";

export const run = promisify(execFile);

export interface InstalledProject {
  /** The fresh project that installed the tarball. */
  readonly consumer: string;
  /** The TMPDIR every command runs with; a check may require it empty afterwards. */
  readonly privateTmp: string;
  readonly version: string;
  /** `file ARGS` in the project, as a user's shell runs it: exit code and output, never a throw for a non-zero exit. */
  inConsumer(file: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The installed bin. */
  gates(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Packs and installs the package before the calling file's tests (`setUp` then runs in the project), and removes it all after them. */
export function useInstalledPackage(setUp: (project: InstalledProject) => Promise<void> = async () => {}): InstalledProject {
  let scratch = "";
  const project = {
    consumer: "",
    privateTmp: "",
    version: "",
    async inConsumer(file: string, args: readonly string[]) {
      try {
        const { stdout, stderr } = await run(file, [...args], { cwd: project.consumer, env: userEnv(project.privateTmp), maxBuffer: 1 << 24 });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code?: unknown; stdout?: string; stderr?: string };
        if (typeof failed.code !== "number") throw error;
        return { code: failed.code, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
      }
    },
    gates: (...args: string[]) => project.inConsumer(join(project.consumer, "node_modules", ".bin", "workspace-gates"), args),
  };
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "workspace-gates-installed-"));
    project.consumer = join(scratch, "consumer");
    project.privateTmp = join(scratch, "tmp");
    await mkdir(project.consumer);
    await mkdir(project.privateTmp);
    project.version = (JSON.parse(await readFile("package.json", "utf8")) as { version: string }).version;
    const { stdout } = await run("npm", ["pack", "--pack-destination", scratch], { maxBuffer: 1 << 24 });
    const tarball = join(scratch, stdout.trim().split("\n").at(-1) as string);
    await writeFile(join(project.consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    await run("npm", ["install", "--no-audit", "--no-fund", tarball], { cwd: project.consumer, env: userEnv(project.privateTmp), maxBuffer: 1 << 24 });
    await setUp(project);
  }, 300_000);
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });
  return project;
}

/** The environment of a user's shell: none of npm's script variables, a TMPDIR of the test's own. */
export function userEnv(privateTmp: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")));
  return { ...env, TMPDIR: privateTmp };
}
