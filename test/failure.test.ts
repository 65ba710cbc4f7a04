// failure(): whatever a tool caught becomes `{ content, isError: true }`, named after the tool.
import { describe, expect, it } from "vitest";
import { failure } from "../src/gates/failure.js";

class BrokenToString {
  toString(): string {
    throw new Error("toString exploded");
  }
}

describe("failure: whatever was thrown becomes an error result", () => {
  it.each([
    ["an Error: its message, not its stack", new Error("disk on fire"), "disk on fire"],
    ["an Error subclass", new RangeError("too big"), "too big"],
    ["a string", "plain words", "plain words"],
    ["a number", 42, "42"],
    ["undefined", undefined, "undefined"],
    ["null", null, "null"],
    ["an object without a prototype, which String() cannot convert", Object.create(null), "[object Object]"],
    ["an object whose toString throws", new BrokenToString(), "[object Object]"],
  ])("%s", (_label, cause, content) => {
    expect(failure(cause)).toEqual({ content, isError: true });
  });

  it("prefixes the tool's name when given", () => {
    expect(failure(new Error("path escapes workspace"), "read")).toEqual({ content: "read: path escapes workspace", isError: true });
    expect(failure(Object.create(null), "bash")).toEqual({ content: "bash: [object Object]", isError: true });
  });
});
