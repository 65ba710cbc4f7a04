// However an audit of an MCP server ends, it leaves nothing in the temp folder and no server running:
// exit 0, 1 or 2, Ctrl-C or SIGTERM mid-run, and a signal while a server is still starting (which
// printed nothing and left workspace-gates-mcp-probe-* behind). Each run is the bin in a child
// process with a TMPDIR of its own, signalled as a terminal or a CI runner does.
import { mkdir, mkdtemp, readFile, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leftIn, startCli, until, untilIn } from "./support/child-cli.js";
import { served } from "./support/tools-server.js";

const CHILD_TIMEOUT_MS = 240_000;
const MCP = ["--mcp", "--mapping", "fixtures/mcp/tools-server.json", "--", ...served("reference")];

let scratch: string;
beforeAll(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), "workspace-gates-endings-")));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function freshTmp(name: string): Promise<string> {
  const tmp = join(scratch, name);
  await mkdir(tmp);
  return tmp;
}

/** Processes whose command line names `tmp`: a server started on a root in it. */
async function runningIn(tmp: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
    const line = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (line.includes(tmp)) found.push(`${pid}: ${line.replaceAll("\0", " ")}`);
  }
  return found;
}

describe("a signal while the MCP server starts", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s: says so, leaves no probe and no server, and exits %i", { timeout: CHILD_TIMEOUT_MS }, async (signal, exit) => {
    const tmp = await freshTmp(`start-${signal}`);
    const { child, ended } = startCli(["audit", "--runs", "1", "--seed", "1", ...MCP, "--start-delay", "600000"], tmp);
    await untilIn(tmp, /^workspace-gates-mcp-probe-/, ended);
    child.kill(signal);
    const { code, stderr } = await ended;
    expect(stderr).toMatch(new RegExp(`^audit: interrupted by ${signal} while the MCP server .* started: nothing was checked$`, "m"));
    expect(code).toBe(exit);
    expect(await leftIn(tmp)).toEqual([]);
    expect(await runningIn(tmp)).toEqual([]);
  });
});

describe("a signal while a sandbox's server starts, before any case (the pace)", () => {
  it("says so, leaves no sandbox and no server, and exits 130", { timeout: CHILD_TIMEOUT_MS }, async () => {
    const tmp = await freshTmp("pace");
    // The probe's server starts at once; the next, the pace's on its sandbox, waits.
    const { child, ended } = startCli(["audit", "--runs", "1", "--seed", "1", ...MCP, "--start-delay", "600000", "--first-start", join(scratch, "pace-first")], tmp);
    await untilIn(tmp, /^workspace-gates-audit-/, ended);
    child.kill("SIGINT");
    const { code, stderr } = await ended;
    expect(stderr).toMatch(/^audit: interrupted by SIGINT while the audit measured how fast mcp: .* answers: nothing was checked$/m);
    expect(code).toBe(130);
    expect(await leftIn(tmp)).toEqual([]);
    expect(await runningIn(tmp)).toEqual([]);
  });
});

describe("SIGTERM mid-run", () => {
  it("removes every sandbox, ends every server, and exits 143", { timeout: CHILD_TIMEOUT_MS }, async () => {
    const tmp = await freshTmp("mid-run");
    const { child, ended, stderr } = startCli(["audit", "--time", "120", "--seed", "1", ...MCP], tmp);
    // A property done: the next is under way, with sandboxes pooled and servers on their roots.
    await until(() => /^audit: \[1\/\d+\]/m.test(stderr()), "a property was done", ended);
    expect((await leftIn(tmp)).some((name) => name.startsWith("workspace-gates-audit-"))).toBe(true);
    child.kill("SIGTERM");
    const { code, stdout } = await ended;
    expect(code).toBe(143);
    expect(stdout).toMatch(/interrupted by SIGTERM/);
    expect(await leftIn(tmp)).toEqual([]);
    expect(await runningIn(tmp)).toEqual([]);
  });
});

describe("an audit that ends on its own", () => {
  it.each([
    ["1: a server that a case kills", ["--die-on-climb", "7"], 1],
    ["2: a server that dies once, its own trouble", ["--exit-after", "7", "--once", "ONCE"], 2],
  ] as const)("exit %s, leaves nothing behind", { timeout: CHILD_TIMEOUT_MS }, async (name, flags, exit) => {
    const tmp = await freshTmp(`ended-${exit}`);
    const once = join(scratch, `once-${exit}`);
    const { ended } = startCli(["audit", "--runs", "5", "--seed", "1", "--only", "containment.read", ...MCP, ...flags.map((word) => (word === "ONCE" ? once : word))], tmp);
    const { code, stderr } = await ended;
    expect(code, `${name}\n${stderr}`).toBe(exit);
    expect(await leftIn(tmp)).toEqual([]);
    expect(await runningIn(tmp)).toEqual([]);
  });
});
