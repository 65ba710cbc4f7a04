// Where a counterexample's call leads (counterexample.ts, `ShownCall.reaches` and `through`): the
// first link of the tree on the call's path that crosses, found name by name down the path, however
// deep the tree (the openings lay out paths of hundreds of names).
import { describe, expect, it } from "vitest";
import { counterexampleOf } from "../src/kit/audit/runner/counterexample.js";
import type { Tree, TreeEntry } from "../src/kit/sandbox/tree.js";

const BOX = "/sandboxes/box-1/g/g/g/g";
const DEPTH = 300;
const deep = Array.from({ length: DEPTH }, () => "d");

const tree: Tree = [
  { kind: "dir", at: ["a"] },
  { kind: "symlink", at: ["a", "in"], target: { form: "relative", area: "root", path: [] } },
  { kind: "symlink", at: ["a", "out"], target: { form: "absolute", area: "outside", path: [] } },
  // The same name again: the first entry of a name is the one laid out, and the one named.
  { kind: "symlink", at: ["a", "out"], target: { form: "absolute", area: "sibling0", path: [] } },
  ...deep.map((_, index): TreeEntry => ({ kind: "dir", at: deep.slice(0, index + 1) })),
  { kind: "symlink", at: [...deep, "twin"], target: { form: "relative", area: "sibling1", path: [] } },
];

function reached(...paths: string[]) {
  const example = counterexampleOf(
    { workspace: { name: "ws", spelling: "canonical", tree } },
    { sent: paths.map((path) => ({ via: "tool", name: "read", args: [{ path }] })), sandboxes: [BOX] },
    undefined,
    undefined,
  );
  return example.calls.map(({ reaches, through }) => ({ reaches, through }));
}

describe("a call's path, followed through the tree's links that cross", () => {
  it("names the first crossing link on the path, not a link that stays inside, nor a later entry of the same name", () => {
    expect(reached("a/out/secret.txt", "a/in/a/out", "a/in/file", "a")).toEqual([
      { reaches: "outside", through: "ws/a/out" },
      { reaches: undefined, through: undefined },
      { reaches: undefined, through: undefined },
      { reaches: undefined, through: undefined },
    ]);
  });

  it("finds a link hundreds of names down, by a relative path or by the sandbox's absolute one", () => {
    const below = `${deep.join("/")}/twin/secret.txt`;
    expect(reached(below, `${BOX}/ws/${below}`)).toEqual([
      { reaches: "ws-other", through: `ws/${below.replace("/secret.txt", "")}` },
      { reaches: "ws-other", through: `ws/${below.replace("/secret.txt", "")}` },
    ]);
  });

  it("names the directory a path leads to beside the workspace, without a link", () => {
    expect(reached("../outside/secret.txt", `${BOX}/ws-other/x`, "../../../../../..")).toEqual([
      { reaches: "outside", through: undefined },
      { reaches: "ws-other", through: undefined },
      { reaches: "..", through: undefined },
    ]);
  });
});
