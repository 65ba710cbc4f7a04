// Every tool set in the registry (src/kit/sandbox/tool-sets.ts), for the tables that hold each of them
// to one contract. A set this platform cannot build is skipped with the reason in its name.
import { describe } from "vitest";
import { TOOL_SETS, type ToolSet } from "../../src/kit/sandbox/tool-sets.js";
import { LINUX_PROCFS, describeNeeding } from "./platform.js";

const NOTHING_MISSING = { missing: false, reason: "" };

/** `describe.each` over the registry: `body` runs once per tool set, titled `<name> tools: <title>`. */
export function describeEachToolSet(title: string, body: (toolSet: ToolSet) => void): void {
  describe.each([...TOOL_SETS.entries()])("%s tools", (_name, toolSet) => {
    describeNeeding(toolSet.needsProcfs ? LINUX_PROCFS : NOTHING_MISSING, title, () => body(toolSet));
  });
}
