// A change outside is named at the call after which it first shows (issue 49): the calls before it,
// made again, change nothing outside, and with it they do. refused-after-writing re-creates the finding
// on MCPVault 0.16.0, where a write through a dangling link made a file outside (and was refused),
// and a later write to a FIFO, answered as a success, was named instead (call 83 of 96 here).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonReport, JsonResult } from "../src/kit/audit/reports/report.js";
import { cli, useScratch } from "./support/cli.js";
import { printed, replay } from "./support/replay.js";

const scratch = useScratch("workspace-gates-pinned-call-test-");
const MODULE = "fixtures/vulnerable/refused-after-writing.ts";

describe("the call a change outside the workspace is named at", () => {
  // --path 0: the first failing case as it was drawn, a tree of some eighty entries and nearly a hundred calls.
  it.each([
    ["the first failing case, unshrunk", ["--path", "0"]],
    ["the shrunk case", []],
  ])("in %s, is the first call after which the canaries show the change", async (name, path) => {
    const json = join(scratch.path, `${name.replaceAll(" ", "-")}.json`);
    const { code, stdout } = await cli(["audit", MODULE, "--only", "containment.write", "--seed", "1", "--runs", "50", ...path, "--json", json]);
    expect(code, stdout).toBe(1);
    const result = (JSON.parse(await readFile(json, "utf8")) as JsonReport).results[0] as JsonResult;
    expect(result.consequence).toBe("outside changed");
    const broke = result.case?.broke ?? 0;
    expect(broke, stdout).toBeGreaterThan(0);
    expect(result.reason).toMatch(new RegExp(`^write \\(call ${broke}\\) changed outside the workspace`));
    const shown = printed(stdout, "containment.write");
    const upTo = async (calls: number) => (await replay(MODULE, result, { ...shown, calls: shown.calls.slice(0, calls) }, undefined, scratch.path)).changes;
    expect(await upTo(broke)).not.toEqual([]);
    expect(await upTo(broke - 1)).toEqual([]);
  }, 120_000);
});
