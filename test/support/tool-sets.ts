// Every tool set in the registry (src/kit/sandbox/tool-sets.ts), for the tables that hold each of them
// to one contract. A set this platform cannot build is skipped with the reason in its name.
import { describe } from "vitest";
import { TOOL_SETS, type ToolSet } from "../../src/kit/sandbox/tool-sets.js";
import { LINUX_PROCFS, type PlatformNeed, describeNeeding } from "./platform.js";

const NOTHING_MISSING = { missing: false, reason: "" };

/**
 * `describe.each` over the registry: `body` runs once per tool set, titled `<name> tools: <title>`,
 * skipped where the platform lacks what the set needs, or what the tests need (`need`).
 */
export function describeEachToolSet(title: string, body: (toolSet: ToolSet) => void, need: PlatformNeed = NOTHING_MISSING): void {
  describe.each([...TOOL_SETS.entries()])("%s tools", (_name, toolSet) => {
    const setNeed = toolSet.needsProcfs ? LINUX_PROCFS : NOTHING_MISSING;
    describeNeeding(setNeed.missing ? setNeed : need, title, () => body(toolSet));
  });
}
