// The verified tools pin the root by a descriptor, and close it once the tools are garbage-collected.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeEach, expect, it } from "vitest";
import { type Sandbox } from "../src/kit/sandbox/sandbox.js";
import { descriptorsOn } from "./support/descriptors.js";
import { LINUX_PROCFS, describeNeeding } from "./support/platform.js";
import { useSandbox } from "./support/sandbox.js";
import { createVerifiedWorkspaceTools } from "../src/verified/verified-tools.js";

let box: Sandbox;
const sandbox = useSandbox();
beforeEach(async () => {
  box = sandbox.current;
});

// The V8 way to reach the collector from inside a running process, since vitest's workers do not
// start with --expose-gc.
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describeNeeding(LINUX_PROCFS, "the pinned root descriptor", () => {
  it("is held while the tools live and closed once they are collected", async () => {
    const gc = collector();
    let tools: unknown = createVerifiedWorkspaceTools(box.root);
    expect(await descriptorsOn(box.root)).toBe(1);
    expect(tools).toHaveLength(3);
    tools = undefined;
    for (let round = 0; round < 10 && (await descriptorsOn(box.root)) > 0; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await descriptorsOn(box.root)).toBe(0);
  });
});
