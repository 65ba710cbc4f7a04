/**
 * Known limits, stated as the rule a stronger implementation would keep. The chapter's tools fail
 * them by design; the audit reports that as a known limit, and a fork that passes one has closed it.
 *
 * - `limits.hardlink`: a hardlink inside the workspace to an outside file (made by anyone who can
 *   create links there) neither leaks the file on read nor changes it on write. Every path check
 *   passes it, since realpath reports the inside name; only `nlink > 1` gives it away.
 */
import fc from "fast-check";
import { fsTree, hardlinkToOutside } from "../arbitraries/index.js";
import { type AuditProperty, execute, inSandbox, toolsOf, violation } from "../runner/property.js";
import { SECRET } from "../../sandbox/sandbox.js";
import { type Tree, type TreeEntry, materialize } from "../../sandbox/tree.js";

interface HardlinkCase {
  tree: Tree;
  link: TreeEntry;
  operation: "read" | "write";
}

export const limitsHardlink: AuditProperty<HardlinkCase> = {
  id: "limits.hardlink",
  gate: "workspacePath",
  kind: "limit",
  title: "a hardlink to an outside file neither leaks it nor changes it",
  needs: ["createWorkspaceTools"],
  consequence: "outside read",
  threat: () => "a link inside the workspace",
  arbitrary: fc.record({
    tree: fsTree(),
    link: hardlinkToOutside(),
    operation: fc.constantFrom("read" as const, "write" as const),
  }),
  render: ({ tree, link }) => ({ workspace: { name: "ws", spelling: "canonical", tree: [link, ...tree] } }),
  async check(target, { tree, link, operation }) {
    await inSandbox(async (box) => {
      await materialize([link, ...tree], box);
      const tools = toolsOf(target, box.root);
      const path = link.at.join("/");
      const result =
        operation === "read" ? await execute(tools.read, { path }) : await execute(tools.write, { path, content: "overwritten through a hardlink" });
      if (String(result.content).includes(SECRET)) violation(`read returned the outside file through the hardlink ${path}`, "secretInAnswer");
    });
  },
};
