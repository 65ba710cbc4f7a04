/**
 * The package the way users meet it, for the checks in test/installed/: `npm pack`, installed into a
 * fresh project (`consumer`) that has none of this repository's devDependencies, driven through
 * `node_modules/.bin/workspace-gates` with the environment of a user's shell and a private TMPDIR.
 * The pack and the install are done once for all the checks (test/installed/install-once.ts); each
 * check works in a copy of that project of its own.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, inject } from "vitest";

export const run = promisify(execFile);

/** The key under which install-once.ts provides the project it installed the tarball into, and the tarball. */
export const INSTALLED_PROJECT = "installedProject";

declare module "vitest" {
  export interface ProvidedContext {
    [INSTALLED_PROJECT]: { consumer: string; tarball: string };
  }
}

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

/** A copy of the installed project before the calling file's tests (`setUp` then runs in it), removed after them. */
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
    await mkdir(project.privateTmp);
    project.version = (JSON.parse(await readFile("package.json", "utf8")) as { version: string }).version;
    const installed = inject(INSTALLED_PROJECT);
    if (installed === undefined) throw new Error("test/installed/ runs with vitest.installed.config.ts, whose globalSetup installs the package: npm run test:installed");
    // The project's package.json names the tarball relative to it (file:../NAME.tgz): it goes beside the copy too.
    await cp(installed.tarball, join(scratch, basename(installed.tarball)));
    // cp -a: thousands of small files, links kept as they are; fs.cp walks them in JavaScript, slower by far.
    await run("cp", ["-a", installed.consumer, project.consumer]);
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
