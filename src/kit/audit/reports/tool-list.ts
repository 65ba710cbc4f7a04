/**
 * `audit --list-tools`: how the audit takes each tool a target offers, before any property attacks one.
 *
 * Promises: one row per tool, in the target's order: the operation its property attacks it as, and by
 * what the kit decided it (`name`, `schema`, `mapping`, `resources` for an MCP server's resources:
 * operations/classify.ts, mcp/resources.ts), with the tool's own
 * argument for each role (a list of edits as `edits[].oldText`, a role inside a list's items as
 * `files[].path`), where its paths go when no argument of their own holds them (a list's items, a
 * patch's headers, file:// URIs), and what every call sends as it is; or
 * why no property attacks it (it takes no path, it is excluded). A target
 * without tools says so.
 */
import type { OfferedTool } from "../../operations/surface.js";
import { type Classification, carriedAs } from "../../operations/classify.js";
import { aligned } from "./report-text.js";
import { showValue } from "../runner/show.js";

/** The text `--list-tools` prints for `label`'s tools. */
export function renderToolList(label: string, offered: readonly OfferedTool[]): string {
  if (offered.length === 0) return `${label} offers no tools: only the properties of its exports apply\n`;
  const rows = offered.map(({ name, classification }) => [name, ...columns(classification)] as const);
  const header = ["tool", "operation", "taken by", "arguments, by role (or why no property attacks it)"] as const;
  const line = aligned([header, ...rows]);
  return `${[`the tools of ${label}, as the audit takes them:`, "", line(header), ...rows.map(line)].join("\n")}\n`;
}

function columns(classification: Classification): [string, string, string] {
  switch (classification.kind) {
    case "operation": {
      const { roles, edits, fixed, carrier } = classification.plan;
      const within = carrier === undefined || carrier.kind === "patch" ? "" : `${carrier.argument}${carrier.kind === "list" ? "[]" : ""}.`;
      const argument = (role: string, name: string) => `${within}${edits !== undefined && (role === "oldText" || role === "newText") ? `${edits}[].${name}` : name}`;
      // A resource has no arguments: its URI is the attacked path's (mcp/resources.ts).
      const taken =
        classification.plan.unplaced !== undefined ? []
        : classification.by === "resources" ? ["a resource read at the attacked path's URI"]
        : carrier?.kind === "patch" ? []
        : [Object.entries(roles).map(([role, name]) => `${role}: ${argument(role, name)}`).join(", ")];
      const itemFixed = carrier === undefined || carrier.kind === "patch" ? {} : Object.fromEntries(Object.entries(carrier.fixed).map(([name, value]) => [`${within}${name}`, value]));
      const sent = Object.entries({ ...fixed, ...itemFixed }).map(([name, value]) => `${name} = ${showValue(value)}`);
      const carried = carriedAs(classification.plan);
      const same = classification.plan.samePath ?? [];
      const also = same.length === 0 ? [] : [`the same path in ${same.join(", ")}`];
      return [classification.operation, classification.by, [...taken, ...also, ...(carried === undefined ? [] : [carried]), ...(sent.length === 0 ? [] : [`always sends ${sent.join(", ")}`])].join("; ")];
    }
    case "no path":
      return ["none", "-", `takes no path: ${classification.why}`];
    case "excluded":
      return ["none", "-", `excluded: ${classification.why}`];
  }
}
