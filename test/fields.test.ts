// Gates 1 and 2: the schema the model is told, asObject, and stringField on every shape of input.
import { describe, expect, it } from "vitest";
import { asObject, callerSignal, stringField } from "../src/gates/fields.js";
import { INVALID_SIGNAL } from "../src/gates/messages.js";
import { schema } from "../src/gates/schema.js";

describe("schema (gate 1)", () => {
  it("builds a closed object schema with the required fields", () => {
    expect(schema(["path"], { path: { type: "string" } })).toEqual({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    });
  });
});

describe("asObject", () => {
  it.each([
    ["null", null],
    ["an array", ["path"]],
    ["a string", "path"],
    ["a number", 1],
    ["a boolean", true],
    ["undefined", undefined],
  ])("refuses %s", (_label, value) => {
    expect(asObject(value)).toBeUndefined();
  });

  it("answers the object itself for a plain object", () => {
    const value = { path: "a" };
    expect(asObject(value)).toBe(value);
  });
});

describe("stringField (gate 2)", () => {
  it.each([
    ["a string", { path: "a.txt" }, "a.txt"],
    ["the empty string, which is a valid value", { path: "" }, ""],
    ["a missing field", {}, undefined],
    ["a number", { path: 1 }, undefined],
    ["null", { path: null }, undefined],
    ["an array", { path: ["a"] }, undefined],
    ["a String object", { path: new String("a") }, undefined],
    ["input that is an array with the field as a property", Object.assign(["x"], { path: "a" }), undefined],
    ["input that is null", null, undefined],
    ["a field only inherited from the prototype, which is not the caller's input", Object.create({ path: "a.txt" }), undefined],
    ["an object without a prototype, which is valid input", Object.assign(Object.create(null), { path: "a.txt" }), "a.txt"],
    ["a getter that throws", throwingGetter(), undefined],
    ["a revoked proxy, which throws on every look", revokedProxy(), undefined],
  ])("for %s", (_label, input, expected) => {
    expect(stringField(input, "path")).toBe(expected);
  });
});

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({ path: "a.txt" }, {});
  revoke();
  return proxy;
}

function throwingGetter(): object {
  return Object.defineProperty({}, "path", {
    enumerable: true,
    get() {
      throw new Error("getter exploded");
    },
  });
}

describe("callerSignal: the signal a caller hands to execute", () => {
  it("passes an absent signal and a real AbortSignal through", () => {
    const signal = new AbortController().signal;
    expect(callerSignal(undefined)).toBeUndefined();
    expect(callerSignal(signal)).toBe(signal);
  });

  it.each([{ aborted: false }, null, "signal", 0])("refuses %j, which could never fire", (value) => {
    expect(() => callerSignal(value)).toThrow(new TypeError(INVALID_SIGNAL));
  });
});
