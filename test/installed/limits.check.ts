/**
 * docs/limits.md's commands from the packed tarball (issue 52): each line of its "See them yourself"
 * block runs in a project that installed the package, through the shell, and exits and prints as the
 * line says. Run alone with `npx vitest run --config vitest.installed.config.ts test/installed/limits.check.ts`.
 */
import { readFile, readdir } from "node:fs/promises";
import { expect, it } from "vitest";
import { useInstalledPackage } from "../support/installed.js";

const project = useInstalledPackage();

/** The block's lines: the command, its exit status and the text its output shows. */
async function limitCommands(): Promise<{ command: string; exits: number; shows: string }[]> {
  const page = await readFile("docs/limits.md", "utf8");
  const block = /<!-- limits-commands:start[^]*?```sh\n([^]*?)```\n<!-- limits-commands:end -->/.exec(page)?.[1] ?? "";
  return block
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [, command = "", exits = "", shows = ""] = /^(.+?)\s+# exits (\d): "(.+)"$/.exec(line) ?? [];
      return { command, exits: Number(exits), shows };
    });
}

it("runs every limit's command as docs/limits.md gives it, with the exit and the output it says, and leaves no sandbox", async () => {
  const commands = await limitCommands();
  expect(commands.map(({ command }) => command.split(" ")[0])).toEqual(["npx", "npx", "npx", "npx", "mkdir", "mkdir"]);
  for (const { command, exits, shows } of commands) {
    const { code, stdout, stderr } = await project.inConsumer("sh", ["-c", command]);
    expect(code, `${command}\n${stdout}${stderr}`).toBe(exits);
    expect(stdout, command).toContain(shows);
  }
  expect((await readdir(project.privateTmp)).filter((name) => name.startsWith("workspace-gates"))).toEqual([]);
});
