/**
 * The words a report needs of its own, defined once, and the same in every report (text, JSON, JUnit,
 * SARIF, HTML): what `$BOX`, the workspace and its neighbours are, how a call names a tool, what "the
 * reference" is.
 *
 * Promises: `legendOf` gives a line (or a line and its continuation) for each term the failures use,
 * and none for a term they do not: a report without a counterexample on a sandbox has no sandbox
 * lines. The twins are listed by their own names, for each root name the counterexamples use.
 */
import type { Counterexample } from "../runner/counterexample.js";
import type { PropertyResult } from "../runner/run.js";
import { namedTwins } from "../../sandbox/root-twins.js";
import { BOX_NAME, showName } from "../../sandbox/tree.js";
import { PROTECTED_SECRET } from "../../operations/protected-paths.js";

type Described = Pick<PropertyResult, "status" | "kind" | "title" | "reason" | "counterexample"> & { consequence?: PropertyResult["consequence"]; case?: Counterexample };

/** The legend of the terms `results` use, a line each (a continuation indented). */
export function legendOf(results: readonly Described[]): string[] {
  const failed = results.filter((result) => result.status === "failed");
  const shown = (result: Described) => `${result.title}\n${result.reason ?? ""}\n${result.counterexample ?? ""}`;
  const roots = [...new Set(failed.flatMap((result) => (result.case?.workspace === undefined ? [] : [result.case.workspace.name])))];
  const onSandbox = roots.length > 0 || failed.some((result) => shown(result).includes(BOX_NAME));
  const calls = failed.flatMap((result) => result.case?.calls ?? []).map((call) => call.call);
  return [
    ...(onSandbox
      ? [
          `${BOX_NAME}: the directory a case ran in, fresh for each case: it holds the workspace and its neighbours,`,
          "  under guard directories (g/g/g/g/) that keep a path with a few .. too many inside the sandbox",
          ...(roots.length === 0 ? ["ws"] : roots).flatMap((root) => [
            `${showName(root)}: the workspace; beside it, outside/ and the root's twins (${namedTwins(root).map(showName).join(", ")})`,
            "  hold canaries that must be neither read nor changed",
          ]),
        ]
      : []),
    ...(failed.some((result) => result.consequence?.startsWith("protected ") === true)
      ? [
          "protected: an entry inside the workspace that --protect (or the mapping's protect) names, laid out at the root, nested",
          `  (tools/…), beside its twins (.GIT, .git., .git ) and behind links (to-protected0); each of its files holds ${PROTECTED_SECRET}`,
        ]
      : []),
    ...(calls.some((call) => /\.execute\(/.test(call)) ? ["read.execute(…): the tool named read among those createWorkspaceTools returned (tool(\"…\") for a name that is no identifier)"] : []),
    ...(calls.some((call) => call.startsWith("client.callTool(")) ? ["client.callTool(…): the MCP server's tool, called through the official SDK's client, as the audit calls it"] : []),
    ...(failed.some((result) => result.kind !== "guarantee" || /\breference\b/.test(shown(result)))
      ? ["the reference: workspace-gates' own tools and path check, whose behaviour every rule is written from (docs/contract.md)"]
      : []),
  ];
}
